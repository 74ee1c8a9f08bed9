package io.fleetmq.app.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Many light MQTT 5 subscribers on raw sockets, read by one thread: each connection only parses
 * packet headers, counts the PUBLISH packets it gets by topic (with their payload length), and
 * acknowledges QoS 1 at once; payload bytes are skipped, not kept. Thousands of these cost the test
 * JVM a few kilobytes each, where thousands of client library objects would not fit.
 */
public final class RawSubscribers implements AutoCloseable {

    /** One subscriber's connection and what it received; fields written by the reader thread. */
    public static final class Connection {
        final String clientId;
        final SocketChannel channel;
        /** The fixed header and the start of the body of the packet being read. */
        private final ByteBuffer head = ByteBuffer.allocate(8_192);
        private int remaining = -1;
        private int bodyRead;
        private int headerBytes;
        private long skip;
        private int publishFirstByte;
        private String publishTopic;
        private int publishBodyLength;
        volatile int connAckReason = -1;
        volatile int subAckReason = -1;
        volatile boolean closed;
        /** How the connection ended: the server's DISCONNECT (reason code and string), end of stream, or an error. */
        volatile String closeCause;
        private final Map<String, Integer> counts = new ConcurrentHashMap<>();
        private final Map<String, Integer> payloadLengths = new ConcurrentHashMap<>();
        private final Map<String, Boolean> retainFlags = new ConcurrentHashMap<>();

        Connection(String clientId, SocketChannel channel) {
            this.clientId = clientId;
            this.channel = channel;
        }

        public String clientId() {
            return clientId;
        }

        public int connAckReason() {
            return connAckReason;
        }

        public int subAckReason() {
            return subAckReason;
        }

        public boolean closed() {
            return closed;
        }

        /** How the connection ended, null while it is open. */
        public String closeCause() {
            return closeCause;
        }

        void closedBy(String cause) {
            if (!closed) {
                closeCause = cause;
                closed = true;
            }
        }

        /** PUBLISH packets received on {@code topic}. */
        public int count(String topic) {
            return counts.getOrDefault(topic, 0);
        }

        /** Payload length of the last PUBLISH on {@code topic}, -1 if none came. */
        public int payloadLength(String topic) {
            return payloadLengths.getOrDefault(topic, -1);
        }

        public boolean retained(String topic) {
            return retainFlags.getOrDefault(topic, false);
        }

        synchronized void write(byte[] bytes) throws IOException {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                if (channel.write(b) == 0) {
                    Thread.onSpinWait();
                }
            }
        }
    }

    private final Selector selector;
    private final List<Connection> connections = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Connections opened since the reader last looked, for it to register with its selector. */
    private final java.util.concurrent.ConcurrentLinkedQueue<Connection> added =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final Thread reader;
    private volatile boolean stopping;
    private volatile Throwable failure;

    private RawSubscribers(Selector selector) {
        this.selector = selector;
        this.reader = new Thread(this::readLoop, "raw-subscribers");
        this.reader.setDaemon(true);
    }

    /** Opens one connection per client ID to {@code port} and sends each its CONNECT. */
    public static RawSubscribers connect(int port, List<String> clientIds,
            java.util.function.Function<String, byte[]> connectPacket) throws IOException {
        RawSubscribers s = new RawSubscribers(Selector.open());
        s.reader.start();
        try {
            s.add(port, clientIds, connectPacket);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** Opens more connections, read by the same thread, and sends each its CONNECT. */
    public void add(int port, List<String> clientIds, java.util.function.Function<String, byte[]> connectPacket)
            throws IOException {
        for (String id : clientIds) {
            SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.configureBlocking(false);
            Connection c = new Connection(id, ch);
            connections.add(c);
            c.write(connectPacket.apply(id));
            added.add(c);
        }
        selector.wakeup();
    }

    /** Why the reader thread stopped, if it did; null while it runs. */
    public Throwable failure() {
        return failure;
    }

    public List<Connection> connections() {
        return connections;
    }

    /** Sends {@code packet} on every connection. */
    public void sendAll(byte[] packet) {
        for (Connection c : connections) {
            try {
                c.write(packet);
            } catch (IOException e) {
                throw new UncheckedIOException(c.clientId + ": " + e.getMessage(), e);
            }
        }
    }

    private void readLoop() {
        ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
        try {
            while (!stopping) {
                for (Connection c; (c = added.poll()) != null; ) {
                    c.channel.register(selector, SelectionKey.OP_READ, c);
                }
                selector.select(200);
                for (SelectionKey key : selector.selectedKeys()) {
                    Connection c = (Connection) key.attachment();
                    try {
                        while (true) {
                            in.clear();
                            int n = c.channel.read(in);
                            if (n < 0) {
                                c.closedBy("end of stream after " + c.counts + " without DISCONNECT");
                                key.cancel();
                                break;
                            }
                            if (n == 0) {
                                break;
                            }
                            in.flip();
                            consume(c, in);
                        }
                    } catch (IOException e) {
                        c.closedBy(e.toString());
                        key.cancel();
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                failure = e;
            }
        }
    }

    /** Feeds bytes read from {@code c} through its packet state machine. */
    private static void consume(Connection c, ByteBuffer in) throws IOException {
        while (in.hasRemaining()) {
            if (c.skip > 0) {
                int n = (int) Math.min(c.skip, in.remaining());
                in.position(in.position() + n);
                c.skip -= n;
                if (c.skip == 0) {
                    c.remaining = -1;
                }
                continue;
            }
            if (c.remaining < 0) {
                // The fixed header: one byte, then a variable byte integer of up to four bytes.
                c.head.put(in.get());
                int len = remainingLength(c.head);
                if (len >= 0) {
                    c.remaining = len;
                    c.headerBytes = c.head.position();
                    c.bodyRead = 0;
                    if (len == 0) {
                        packet(c);
                    }
                }
                continue;
            }
            // The body, of which at most the head's room is kept: the rest of a PUBLISH is payload.
            int keep = Math.min(c.remaining - c.bodyRead, Math.min(in.remaining(), c.head.remaining()));
            for (int i = 0; i < keep; i++) {
                c.head.put(in.get());
            }
            c.bodyRead += keep;
            if (c.bodyRead == c.remaining || !c.head.hasRemaining()) {
                packet(c);
            }
        }
    }

    /** The remaining length once the fixed header is complete, else -1. */
    private static int remainingLength(ByteBuffer head) {
        int value = 0;
        int multiplier = 1;
        for (int i = 1; i < head.position(); i++) {
            int b = head.get(i) & 0xFF;
            value += (b & 0x7F) * multiplier;
            if ((b & 0x80) == 0) {
                return value;
            }
            multiplier *= 128;
        }
        return -1;
    }

    /** The head holds a whole packet, or the start of a PUBLISH too large to keep whole. */
    private static void packet(Connection c) throws IOException {
        ByteBuffer h = c.head;
        int first = h.get(0) & 0xFF;
        int type = first >> 4;
        int body = c.headerBytes;
        switch (type) {
            case 2 -> c.connAckReason = h.get(body + 1) & 0xFF;
            case 9 -> c.subAckReason = h.get(body + 2 + varintLength(h, body + 2) + propertyLength(h, body + 2)) & 0xFF;
            case 3 -> publish(c, first, body);
            case 14 -> c.closedBy(disconnect(c));
            default -> { }
        }
        long rest = (long) c.remaining - c.bodyRead;
        h.clear();
        if (rest > 0) {
            c.skip = rest;
        } else {
            c.remaining = -1;
        }
    }

    private static void publish(Connection c, int first, int body) throws IOException {
        ByteBuffer h = c.head;
        int qos = (first >> 1) & 3;
        int topicLength = ((h.get(body) & 0xFF) << 8) | (h.get(body + 1) & 0xFF);
        byte[] topic = new byte[topicLength];
        for (int i = 0; i < topicLength; i++) {
            topic[i] = h.get(body + 2 + i);
        }
        int at = body + 2 + topicLength;
        int packetId = -1;
        if (qos > 0) {
            packetId = ((h.get(at) & 0xFF) << 8) | (h.get(at + 1) & 0xFF);
            at += 2;
        }
        int properties = propertyLength(h, at);
        at += varintLength(h, at) + properties;
        String t = new String(topic, StandardCharsets.UTF_8);
        c.counts.merge(t, 1, Integer::sum);
        c.payloadLengths.put(t, c.remaining - (at - body));
        c.retainFlags.put(t, (first & 1) != 0);
        if (qos == 1) {
            c.write(new byte[] {0x40, 2, (byte) (packetId >> 8), (byte) packetId});
        }
    }

    /** A server's DISCONNECT as text: its reason code and its properties' printable bytes (the reason string). */
    private static String disconnect(Connection c) {
        ByteBuffer h = c.head;
        int body = c.headerBytes;
        if (c.remaining == 0) {
            return "DISCONNECT 0x00 after " + c.counts;
        }
        StringBuilder text = new StringBuilder("DISCONNECT 0x" + Integer.toHexString(h.get(body) & 0xFF));
        if (c.remaining > 1) {
            text.append(" \"");
            for (int at = body + 1 + varintLength(h, body + 1); at < h.position(); at++) {
                char ch = (char) (h.get(at) & 0xFF);
                text.append(ch >= 0x20 && ch < 0x7F ? ch : '.');
            }
            text.append('"');
        }
        return text.append(" after ").append(c.counts).toString();
    }

    private static int propertyLength(ByteBuffer h, int at) {
        int value = 0;
        int multiplier = 1;
        for (int i = at; ; i++) {
            int b = h.get(i) & 0xFF;
            value += (b & 0x7F) * multiplier;
            if ((b & 0x80) == 0) {
                return value;
            }
            multiplier *= 128;
        }
    }

    private static int varintLength(ByteBuffer h, int at) {
        int n = 1;
        while ((h.get(at + n - 1) & 0x80) != 0) {
            n++;
        }
        return n;
    }

    @Override
    public void close() {
        stopping = true;
        selector.wakeup();
        try {
            reader.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Connection c : connections) {
            try {
                c.channel.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        try {
            selector.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
