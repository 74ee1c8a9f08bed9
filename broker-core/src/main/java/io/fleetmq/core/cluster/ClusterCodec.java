package io.fleetmq.core.cluster;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.subscription.Subscription;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Binary form of the records nodes exchange. Every encoding starts with a format version byte and a
 * type byte; strings are a 4-byte length and UTF-8, messages are embedded in their
 * {@link MessageCodec} form. Readers refuse versions and types they do not know.
 */
public final class ClusterCodec {

    public static final int FORMAT_VERSION = 1;

    private static final byte NODE_STATUS = 1;
    private static final byte SESSION_STATE = 2;
    private static final byte SUBSCRIPTIONS = 3;
    /** A heartbeat's {@link NodeInfo}, in a record header; later versions may append fields. */
    private static final byte NODE_INFO = 6;
    private static final byte EVENT_CONNECT = 10;
    private static final byte EVENT_DISCONNECTED = 11;
    private static final byte EVENT_WILL_PUBLISHED = 12;
    private static final byte EVENT_EXPIRED = 13;
    /** Older nodes skip it as a malformed record (counted, logged) and decide as they did before. */
    private static final byte EVENT_RELEASED = 14;
    private static final byte COMMAND_CONNECT_ACCEPTED = 20;
    private static final byte COMMAND_TAKE_OVER = 21;
    private static final byte COMMAND_QUEUED = 22;
    /** Older nodes skip it as a malformed record (counted, logged) and go on. */
    private static final byte COMMAND_DRAIN = 27;
    private static final byte COMMAND_ADMIN_DISCONNECT = 23;
    private static final byte DOWNLINK = 30;
    /** A part of a split downlink after the first: {@link #DOWNLINK} with the part number after the offset. */
    private static final byte DOWNLINK_PART = 31;
    /** Version, type, source partition, offset, part, subscription count, message length. */
    private static final int DOWNLINK_HEADER_BYTES = 2 + 4 + 8 + 4 + 4 + 4;

    private ClusterCodec() {
    }

    // ------------------------------------------------------------------ encode

    public static byte[] encode(NodeStatus s) {
        return write(NODE_STATUS, out -> {
            str(out, s.nodeId());
            out.writeLong(s.incarnation());
            out.writeBoolean(s.up());
            out.writeLong(s.heartbeatMillis());
        });
    }

    public static byte[] encode(NodeInfo i) {
        return write(NODE_INFO, out -> {
            str(out, i.address());
            out.writeLong(i.startedAtMillis());
            str(out, i.version());
            out.writeInt(i.connectedSessions());
            out.writeBoolean(i.draining());
        });
    }

    public static byte[] encode(SessionState s) {
        return write(SESSION_STATE, out -> {
            str(out, s.clientId());
            str(out, s.nodeId());
            out.writeLong(s.nodeIncarnation());
            out.writeLong(s.epoch());
            out.writeBoolean(s.connected());
            out.writeLong(s.sessionExpirySeconds());
            out.writeLong(s.disconnectedAtMillis());
            will(out, s.will());
            str(out, s.requestId());
            str(out, s.clientType());
            out.writeBoolean(s.queuing());
            client(out, s.client());
        });
    }

    public static byte[] encode(ClientSubscriptions s) {
        return write(SUBSCRIPTIONS, out -> {
            str(out, s.clientId());
            str(out, s.nodeId());
            out.writeLong(s.incarnation());
            subscriptions(out, s.subscriptions());
        });
    }

    public static byte[] encode(SessionEvent event) {
        if (event instanceof SessionEvent.Connect c) {
            return write(EVENT_CONNECT, out -> {
                str(out, c.requestId());
                str(out, c.clientId());
                str(out, c.nodeId());
                out.writeLong(c.nodeIncarnation());
                out.writeBoolean(c.cleanStart());
                out.writeLong(c.sessionExpirySeconds());
                will(out, c.will());
                str(out, c.clientType());
                client(out, c.client());
            });
        } else if (event instanceof SessionEvent.Disconnected d) {
            return write(EVENT_DISCONNECTED, out -> {
                str(out, d.clientId());
                out.writeLong(d.epoch());
                out.writeLong(d.sessionExpirySeconds());
                will(out, d.will());
                out.writeLong(d.atMillis());
            });
        } else if (event instanceof SessionEvent.WillPublished w) {
            return write(EVENT_WILL_PUBLISHED, out -> {
                str(out, w.clientId());
                out.writeLong(w.epoch());
            });
        } else if (event instanceof SessionEvent.Expired e) {
            return write(EVENT_EXPIRED, out -> {
                str(out, e.clientId());
                out.writeLong(e.epoch());
            });
        } else if (event instanceof SessionEvent.Released r) {
            return write(EVENT_RELEASED, out -> {
                str(out, r.clientId());
                out.writeLong(r.epoch());
            });
        }
        throw new IllegalArgumentException("unknown event " + event);
    }

    public static byte[] encode(NodeCommand command) {
        if (command instanceof NodeCommand.ConnectAccepted a) {
            return write(COMMAND_CONNECT_ACCEPTED, out -> {
                str(out, a.requestId());
                str(out, a.clientId());
                out.writeLong(a.epoch());
                out.writeBoolean(a.sessionPresent());
                out.writeBoolean(a.queuing());
                // clearStore goes in a header (CLEAR_STORE_HEADER): a node of an earlier version
                // refuses a record with bytes after the fields it knows, and would never answer.
            });
        } else if (command instanceof NodeCommand.TakeOver t) {
            return write(COMMAND_TAKE_OVER, out -> {
                str(out, t.clientId());
                out.writeLong(t.epoch());
            });
        } else if (command instanceof NodeCommand.Queued q) {
            return write(COMMAND_QUEUED, out -> {
                str(out, q.clientId());
                out.writeLong(q.seq());
                bytes(out, encode(q.message()));
            });
        } else if (command instanceof NodeCommand.Drain d) {
            return write(COMMAND_DRAIN, out -> {
                out.writeBoolean(d.drain());
                str(out, d.requestedBy());
            });
        } else if (command instanceof NodeCommand.AdminDisconnect a) {
            return write(COMMAND_ADMIN_DISCONNECT, out -> {
                str(out, a.clientId());
                out.writeLong(a.epoch());
                out.writeBoolean(a.endSession());
            });
        }
        throw new IllegalArgumentException("unknown command " + command);
    }

    public static byte[] encode(Downlink d) {
        return encode(d, MessageCodec.encode(d.message()));
    }

    /**
     * Encodes {@code d} with its message already encoded: the parts of a split record share one
     * encoding of a message that may be megabytes large.
     */
    public static byte[] encode(Downlink d, byte[] encodedMessage) {
        // The first part keeps the unsplit layout, so a record that needs no split reads as before.
        int hint = 2 + 4 + 8 + 4 + 4 + 4 + encodedMessage.length + 96 * d.matched().size();
        return write(d.part() == 0 ? DOWNLINK : DOWNLINK_PART, hint, out -> {
            out.writeInt(d.sourcePartition());
            out.writeLong(d.sourceOffset());
            if (d.part() > 0) {
                out.writeInt(d.part());
            }
            subscriptions(out, d.matched());
            bytes(out, encodedMessage);
        });
    }

    /**
     * Splits {@code d} into parts whose encodings stay within {@code maxBytes}, numbered from 0 in
     * order; one part, {@code d} itself, when it fits. A client's subscriptions stay in one part
     * where they fit together, so overlapping subscriptions still give it one copy [MQTT-3.3.4-2];
     * only a client whose subscriptions alone exceed the limit is spread over parts. A part holds
     * at least one subscription, so a single subscription too large with the message still makes
     * one (too large) part: the writer's permanent error then puts it in the dead-letter topic.
     *
     * @param encodedMessageBytes the length of {@code MessageCodec.encode(d.message())}
     */
    public static List<Downlink> split(Downlink d, int encodedMessageBytes, int maxBytes) {
        long whole = DOWNLINK_HEADER_BYTES + (long) encodedMessageBytes;
        for (Subscription s : d.matched()) {
            whole += encodedSize(s);
        }
        if (whole <= maxBytes || d.matched().size() <= 1) {
            return List.of(d);
        }
        long room = maxBytes - DOWNLINK_HEADER_BYTES - (long) encodedMessageBytes;
        if (room <= 0) {
            return List.of(d); // the message alone is too large: one record, dead-lettered once, not one per part
        }
        List<List<Subscription>> parts = new ArrayList<>();
        List<Subscription> current = new ArrayList<>();
        long used = 0;
        for (List<Subscription> client : io.fleetmq.core.subscription.Matches.byClient(d.matched()).values()) {
            long clientBytes = 0;
            for (Subscription s : client) {
                clientBytes += encodedSize(s);
            }
            if (used + clientBytes <= room || current.isEmpty() && clientBytes <= room) {
                current.addAll(client);
                used += clientBytes;
                continue;
            }
            if (clientBytes <= room) {
                parts.add(current);
                current = new ArrayList<>(client);
                used = clientBytes;
                continue;
            }
            for (Subscription s : client) { // too many for one part even alone: one at a time
                long size = encodedSize(s);
                if (!current.isEmpty() && used + size > room) {
                    parts.add(current);
                    current = new ArrayList<>();
                    used = 0;
                }
                current.add(s);
                used += size;
            }
        }
        if (!current.isEmpty()) {
            parts.add(current);
        }
        List<Downlink> split = new ArrayList<>(parts.size());
        for (int i = 0; i < parts.size(); i++) {
            split.add(new Downlink(d.sourcePartition(), d.sourceOffset(), d.message(), parts.get(i), i));
        }
        return split;
    }

    /** Bytes {@code s} takes in a downlink record. */
    static long encodedSize(Subscription s) {
        return 4 + utf8Length(s.clientId()) + 4 + utf8Length(s.topicFilter()) + 4 + utf8Length(s.shareGroup())
                + 1 + 4 + 4 + utf8Length(s.nodeId());
    }

    private static long utf8Length(String s) {
        if (s == null) {
            return 0;
        }
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    // ------------------------------------------------------------------ decode

    public static NodeStatus decodeNodeStatus(byte[] bytes) throws MessageFormatException {
        return read(bytes, NODE_STATUS, in -> new NodeStatus(str(in), in.getLong(), bool(in), in.getLong()));
    }

    /**
     * A heartbeat's {@link NodeInfo}. Bytes after the fields known here are what a later version
     * added, and are skipped rather than refused.
     */
    public static NodeInfo decodeNodeInfo(byte[] bytes) throws MessageFormatException {
        return read(bytes, NODE_INFO, in -> {
            NodeInfo info = new NodeInfo(str(in), in.getLong(), str(in), in.getInt(), bool(in));
            in.position(in.limit()); // fields of a later version
            return info;
        });
    }

    public static SessionState decodeSessionState(byte[] bytes) throws MessageFormatException {
        return read(bytes, SESSION_STATE, in -> {
            String clientId = str(in);
            String nodeId = common(str(in));
            long incarnation = in.getLong();
            long epoch = in.getLong();
            boolean connected = bool(in);
            long expiry = in.getLong();
            long disconnectedAt = in.getLong();
            SessionState.PendingWill will = will(in);
            String requestId = str(in);
            String clientType = common(str(in));
            // Records written before the queuing flag existed: a session queues when its expiry is above 0.
            boolean queuing = in.hasRemaining() ? bool(in) : expiry > 0;
            // Records written before connection details were replicated end here.
            SessionState.ClientInfo client = in.hasRemaining() ? client(in) : null;
            return new SessionState(clientId, nodeId, incarnation, epoch, connected, expiry, disconnectedAt, will,
                    requestId, clientType, queuing, client);
        });
    }

    public static ClientSubscriptions decodeSubscriptions(byte[] bytes) throws MessageFormatException {
        return read(bytes, SUBSCRIPTIONS, in -> {
            String clientId = str(in);
            return new ClientSubscriptions(clientId, common(str(in)), in.getLong(), subscriptions(in, clientId));
        });
    }

    public static SessionEvent decodeEvent(byte[] bytes) throws MessageFormatException {
        int type = type(bytes);
        return read(bytes, (byte) type, in -> {
            switch (type) {
                case EVENT_CONNECT:
                    return new SessionEvent.Connect(str(in), str(in), str(in), in.getLong(), bool(in), in.getLong(),
                            will(in), str(in), in.hasRemaining() ? client(in) : null);
                case EVENT_DISCONNECTED:
                    return new SessionEvent.Disconnected(str(in), in.getLong(), in.getLong(), will(in), in.getLong());
                case EVENT_WILL_PUBLISHED:
                    return new SessionEvent.WillPublished(str(in), in.getLong());
                case EVENT_EXPIRED:
                    return new SessionEvent.Expired(str(in), in.getLong());
                case EVENT_RELEASED:
                    return new SessionEvent.Released(str(in), in.getLong());
                default:
                    throw new MessageFormatException("not a session event: type " + type);
            }
        });
    }

    public static NodeCommand decodeCommand(byte[] bytes) throws MessageFormatException {
        int type = type(bytes);
        return read(bytes, (byte) type, in -> {
            switch (type) {
                case COMMAND_CONNECT_ACCEPTED:
                    return connectAccepted(in);
                case COMMAND_TAKE_OVER:
                    return new NodeCommand.TakeOver(str(in), in.getLong());
                case COMMAND_QUEUED:
                    return new NodeCommand.Queued(str(in), in.getLong(), decodeDownlink(bytes(in)));
                case COMMAND_DRAIN:
                    return new NodeCommand.Drain(bool(in), str(in));
                case COMMAND_ADMIN_DISCONNECT:
                    return new NodeCommand.AdminDisconnect(str(in), in.getLong(), bool(in));
                default:
                    throw new MessageFormatException("not a node command: type " + type);
            }
        });
    }

    public static Downlink decodeDownlink(byte[] bytes) throws MessageFormatException {
        boolean part = bytes != null && bytes.length >= 2 && bytes[1] == DOWNLINK_PART;
        return read(bytes, part ? DOWNLINK_PART : DOWNLINK, in -> {
            int partition = in.getInt();
            long offset = in.getLong();
            int number = part ? in.getInt() : 0;
            if (part && number < 1) {
                throw new MessageFormatException("downlink part " + number + " out of range");
            }
            List<Subscription> matched = subscriptions(in, null);
            return new Downlink(partition, offset, MessageCodec.decode(bytes(in)), matched, number);
        });
    }

    /**
     * The source of a downlink record, from its first bytes only: a reader that skips repeats need
     * not decode a message that may be megabytes large.
     */
    public static Downlink.Source downlinkSource(byte[] bytes) throws MessageFormatException {
        if (bytes == null || bytes.length < 2 + 4 + 8) {
            throw new MessageFormatException("record too short");
        }
        if (bytes[0] != FORMAT_VERSION || bytes[1] != DOWNLINK && bytes[1] != DOWNLINK_PART) {
            throw new MessageFormatException("not a downlink record (version " + bytes[0] + ", type " + bytes[1] + ")");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes, 2, bytes.length - 2);
        int partition = in.getInt();
        long offset = in.getLong();
        int part = 0;
        if (bytes[1] == DOWNLINK_PART) {
            if (in.remaining() < 4) {
                throw new MessageFormatException("record truncated");
            }
            part = in.getInt();
        }
        return new Downlink.Source(partition, offset, part);
    }

    // ------------------------------------------------------------------ helpers

    private interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    private interface Reader<T> {
        T read(ByteBuffer in) throws MessageFormatException;
    }

    private static byte[] write(byte type, Writer writer) {
        return write(type, 64, writer);
    }

    /** @param sizeHint about the bytes it will take: enough saves the buffer's growing copies */
    private static byte[] write(byte type, int sizeHint, Writer writer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(sizeHint);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT_VERSION);
            out.writeByte(type);
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    private static int type(byte[] bytes) throws MessageFormatException {
        if (bytes == null || bytes.length < 2) {
            throw new MessageFormatException("record too short");
        }
        return bytes[1];
    }

    private static <T> T read(byte[] bytes, byte type, Reader<T> reader) throws MessageFormatException {
        if (bytes == null || bytes.length < 2) {
            throw new MessageFormatException("record too short");
        }
        if (bytes[0] != FORMAT_VERSION) {
            throw new MessageFormatException("unknown cluster record format version " + bytes[0]);
        }
        if (bytes[1] != type) {
            throw new MessageFormatException("expected record type " + type + ", found " + bytes[1]);
        }
        ByteBuffer in = ByteBuffer.wrap(bytes, 2, bytes.length - 2);
        try {
            T value = reader.read(in);
            if (in.hasRemaining()) {
                throw new MessageFormatException(in.remaining() + " bytes after the end of the record");
            }
            return value;
        } catch (BufferUnderflowException e) {
            throw new MessageFormatException("record truncated");
        } catch (IllegalArgumentException | NullPointerException | io.fleetmq.core.topic.InvalidTopicException e) {
            throw new MessageFormatException("invalid record: " + e.getMessage());
        }
    }

    private static void str(DataOutputStream out, String s) throws IOException {
        if (s == null) {
            out.writeInt(-1);
            return;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    /** Without its {@link #CLEAR_STORE_HEADER}, an answer clears the store of every new session, as before it existed. */
    private static NodeCommand.ConnectAccepted connectAccepted(ByteBuffer in) throws MessageFormatException {
        String requestId = str(in);
        String clientId = str(in);
        long epoch = in.getLong();
        boolean present = bool(in);
        boolean queuing = in.hasRemaining() && bool(in);
        return new NodeCommand.ConnectAccepted(requestId, clientId, epoch, present, queuing, !present);
    }

    /**
     * The record header that carries {@link NodeCommand.ConnectAccepted#clearStore()}, beside the
     * command's value, which stays as nodes of earlier versions read it. Those ignore the header and
     * clear the store of every new session.
     */
    public static final String CLEAR_STORE_HEADER = "fleetmq-clear-store";

    /** The value of {@link #CLEAR_STORE_HEADER} for a command, or null where it has none. */
    public static byte[] clearStoreHeader(NodeCommand command) {
        return command instanceof NodeCommand.ConnectAccepted a ? new byte[] {(byte) (a.clearStore() ? 1 : 0)} : null;
    }

    /**
     * A node command as read from its record: the value, and the {@link #CLEAR_STORE_HEADER} value
     * (null if the record has none).
     */
    public static NodeCommand decodeCommand(byte[] value, byte[] clearStore) throws MessageFormatException {
        NodeCommand command = decodeCommand(value);
        if (clearStore == null || !(command instanceof NodeCommand.ConnectAccepted a)) {
            return command;
        }
        if (clearStore.length != 1 || (clearStore[0] != 0 && clearStore[0] != 1)) {
            throw new MessageFormatException("invalid " + CLEAR_STORE_HEADER + " header");
        }
        return new NodeCommand.ConnectAccepted(a.requestId(), a.clientId(), a.epoch(), a.sessionPresent(),
                a.queuing(), clearStore[0] == 1);
    }

    private static String str(ByteBuffer in) throws MessageFormatException {
        int length = in.getInt();
        if (length == -1) {
            return null;
        }
        if (length < 0 || length > in.remaining()) {
            throw new MessageFormatException("string length " + length + " out of range");
        }
        String s = new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        return s;
    }

    /** Strings of a small set (node IDs, client types, protocol versions): one instance of each. */
    private static final Map<String, String> COMMON = new ConcurrentHashMap<>();
    /** Values kept in {@link #COMMON}; beyond, new values are not shared (a bound, never reached in use). */
    private static final int MAX_COMMON = 4_096;

    /**
     * The one instance of {@code s} that every decoded record shares. The state topics replicate every
     * session and subscription of the cluster to every node, each naming its node and client type: a
     * copy of each per session would cost more than the session's own data.
     */
    private static String common(String s) {
        if (s == null) {
            return null;
        }
        String known = COMMON.get(s);
        if (known != null) {
            return known;
        }
        if (COMMON.size() >= MAX_COMMON) {
            return s;
        }
        known = COMMON.putIfAbsent(s, s);
        return known != null ? known : s;
    }

    private static void bytes(DataOutputStream out, byte[] b) throws IOException {
        out.writeInt(b.length);
        out.write(b);
    }

    private static byte[] bytes(ByteBuffer in) throws MessageFormatException {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
            throw new MessageFormatException("byte length " + length + " out of range");
        }
        byte[] b = new byte[length];
        in.get(b);
        return b;
    }

    private static boolean bool(ByteBuffer in) throws MessageFormatException {
        byte b = in.get();
        if (b != 0 && b != 1) {
            throw new MessageFormatException("boolean byte " + b);
        }
        return b == 1;
    }

    private static void will(DataOutputStream out, SessionState.PendingWill will) throws IOException {
        out.writeBoolean(will != null);
        if (will != null) {
            out.writeLong(will.delaySeconds());
            bytes(out, MessageCodec.encode(will.message()));
        }
    }

    private static SessionState.PendingWill will(ByteBuffer in) throws MessageFormatException {
        if (!bool(in)) {
            return null;
        }
        long delay = in.getLong();
        BrokerMessage message = MessageCodec.decode(bytes(in));
        return new SessionState.PendingWill(message, delay);
    }

    /**
     * Connection details as a length-prefixed block at the end of the record; nothing when unknown,
     * so such a record is the one older nodes wrote (and still read). Readers take the fields they
     * know from the block and skip the rest, so a later version can add fields at its end without
     * breaking nodes that read this one.
     */
    private static void client(DataOutputStream out, SessionState.ClientInfo c) throws IOException {
        if (c == null) {
            return;
        }
        ByteArrayOutputStream block = new ByteArrayOutputStream(64);
        try (DataOutputStream b = new DataOutputStream(block)) {
            str(b, c.address());
            str(b, c.username());
            str(b, c.protocol());
            b.writeLong(c.connectedAtMillis());
            b.writeInt(c.keepAliveSeconds());
        }
        bytes(out, block.toByteArray());
    }

    private static SessionState.ClientInfo client(ByteBuffer in) throws MessageFormatException {
        int length = in.getInt();
        if (length == -1) {
            return null;
        }
        if (length < 0 || length > in.remaining()) {
            throw new MessageFormatException("client block length " + length + " out of range");
        }
        ByteBuffer block = ByteBuffer.wrap(in.array(), in.arrayOffset() + in.position(), length).slice();
        in.position(in.position() + length);
        return new SessionState.ClientInfo(str(block), str(block), common(str(block)), block.getLong(), block.getInt());
    }

    private static void subscriptions(DataOutputStream out, List<Subscription> subs) throws IOException {
        out.writeInt(subs.size());
        for (Subscription s : subs) {
            str(out, s.clientId());
            str(out, s.topicFilter());
            str(out, s.shareGroup());
            out.writeByte(s.qos() | (s.noLocal() ? 4 : 0) | (s.retainAsPublished() ? 8 : 0) | s.retainHandling() << 4);
            out.writeInt(s.subscriptionId());
            str(out, s.nodeId());
        }
    }

    /**
     * @param owner the client ID of the state record they came in, whose subscriptions are held: each
     *     shares that string and a common node ID instead of holding copies; null for a downlink
     */
    private static List<Subscription> subscriptions(ByteBuffer in, String owner) throws MessageFormatException {
        int count = in.getInt();
        if (count < 0 || count > in.remaining()) {
            throw new MessageFormatException("subscription count " + count + " out of range");
        }
        List<Subscription> subs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String clientId = str(in);
            if (clientId != null && clientId.equals(owner)) {
                clientId = owner;
            }
            String filter = str(in);
            String group = str(in);
            int flags = in.get();
            int subscriptionId = in.getInt();
            // Only held records share it: a downlink's (owner null) live for one delivery, and the
            // look-up would be work on the message path for nothing.
            String nodeId = owner != null ? common(str(in)) : str(in);
            subs.add(new Subscription(clientId, filter, group, flags & 3, (flags & 4) != 0, (flags & 8) != 0,
                    (flags >> 4) & 3, subscriptionId, nodeId));
        }
        return subs;
    }
}
