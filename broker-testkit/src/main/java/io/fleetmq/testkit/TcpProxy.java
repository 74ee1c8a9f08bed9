package io.fleetmq.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 in front of one target, for fault tests: it can stall a direction (as a
 * stopped peer or a full network queue would), partition the link (bytes stop flowing both ways
 * while connections look open, as when packets are dropped on the way), cut it (every connection
 * reset, new ones refused), or delay what it forwards.
 *
 * <p>One thread per direction and connection; meant for a handful of connections (a node's link to
 * Kafka, a client's link to a node), not for load.
 */
public final class TcpProxy implements AutoCloseable {

    /** Which way bytes travel. */
    public enum Direction {
        /** From the proxy's client to the target. */
        UPSTREAM,
        /** From the target back to the proxy's client. */
        DOWNSTREAM
    }

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private final Thread acceptor;

    /** Bytes read from one side and not yet written to the other, per direction. */
    private final AtomicLong upstreamHeld = new AtomicLong();
    private final AtomicLong downstreamHeld = new AtomicLong();

    private volatile boolean upstreamPaused;
    private volatile boolean downstreamPaused;
    private volatile boolean refusing;
    private volatile long delayNanos;
    private volatile boolean closed;

    private TcpProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "tcp-proxy-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy that forwards to {@code host:port}, listening on a free port of its own. */
    public static TcpProxy start(String host, int port) throws IOException {
        return new TcpProxy(new InetSocketAddress(host, port));
    }

    /** A proxy in front of a {@code host:port} address such as a Kafka bootstrap server. */
    public static TcpProxy start(String hostAndPort) throws IOException {
        int colon = hostAndPort.lastIndexOf(':');
        return start(hostAndPort.substring(0, colon), Integer.parseInt(hostAndPort.substring(colon + 1)));
    }

    public int port() {
        return server.getLocalPort();
    }

    /** {@code 127.0.0.1:<port>}, to give a client instead of the target's address. */
    public String address() {
        return "127.0.0.1:" + port();
    }

    /** Connections open through the proxy now. */
    public int connections() {
        return links.size();
    }

    /**
     * Bytes the proxy has read in one direction and not forwarded yet: while the direction is paused,
     * what the sender sent and its peer has not seen (a PUBREC a node sent, for instance).
     */
    public long held(Direction direction) {
        return heldCounter(direction).get();
    }

    private AtomicLong heldCounter(Direction direction) {
        return direction == Direction.UPSTREAM ? upstreamHeld : downstreamHeld;
    }

    /** Stops forwarding in one direction; what arrives waits (and TCP flow control pushes back). */
    public void pause(Direction direction) {
        if (direction == Direction.UPSTREAM) {
            upstreamPaused = true;
        } else {
            downstreamPaused = true;
        }
    }

    /** Forwards again in one direction, starting with what waited. */
    public void resume(Direction direction) {
        synchronized (gate) {
            if (direction == Direction.UPSTREAM) {
                upstreamPaused = false;
            } else {
                downstreamPaused = false;
            }
            gate.notifyAll();
        }
    }

    /**
     * Bytes stop flowing both ways, on open connections and on new ones, while every connection
     * stays open: the peers see silence, not an error, until their own timeouts fire.
     */
    public void partition() {
        upstreamPaused = true;
        downstreamPaused = true;
    }

    /**
     * Ends a partition: connections that lived through it are reset (as a real network's peers
     * would have timed them out), and new connections work again.
     */
    public void heal() {
        closeLinks();
        resume(Direction.UPSTREAM);
        resume(Direction.DOWNSTREAM);
    }

    /** Resets every open connection and refuses new ones until {@link #restore()}. */
    public void cut() {
        refusing = true;
        closeLinks();
    }

    /** Accepts connections again after {@link #cut()}. */
    public void restore() {
        refusing = false;
    }

    /** Holds every chunk of bytes this long before forwarding it (zero: none). */
    public void delay(Duration delay) {
        delayNanos = delay.toNanos();
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (refusing) {
                closeQuietly(client);
                continue;
            }
            try {
                Socket upstream = new Socket();
                upstream.connect(target, 5_000);
                Link link = new Link(client, upstream);
                links.add(link);
                link.start();
            } catch (IOException e) {
                closeQuietly(client); // the target is away: the client sees a reset, as without a proxy
            }
        }
    }

    private void closeLinks() {
        for (Link link : links) {
            link.close();
        }
    }

    private boolean paused(Direction direction) {
        return direction == Direction.UPSTREAM ? upstreamPaused : downstreamPaused;
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        closeLinks();
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing after a reset or on shutdown; nothing to tell
        }
    }

    /** One proxied connection: the client's socket, the target's, and a pump each way. */
    private final class Link {
        private final Socket client;
        private final Socket upstream;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start() throws IOException {
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
            pump(client.getInputStream(), upstream.getOutputStream(), Direction.UPSTREAM);
            pump(upstream.getInputStream(), client.getOutputStream(), Direction.DOWNSTREAM);
        }

        private void pump(InputStream in, OutputStream out, Direction direction) {
            Thread t = new Thread(() -> {
                byte[] buffer = new byte[16 * 1024];
                AtomicLong held = heldCounter(direction);
                int pending = 0;
                try {
                    int n;
                    while ((n = in.read(buffer)) >= 0) {
                        pending = n;
                        held.addAndGet(n);
                        awaitFlow(direction);
                        long delay = delayNanos;
                        if (delay > 0) {
                            Thread.sleep(delay / 1_000_000, (int) (delay % 1_000_000));
                        }
                        out.write(buffer, 0, n);
                        out.flush();
                        held.addAndGet(-n);
                        pending = 0;
                    }
                } catch (SocketException e) {
                    // reset by a peer, by cut() or by heal()
                } catch (IOException e) {
                    // the other side went away
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    held.addAndGet(-pending); // never forwarded: the link is gone
                    close();
                }
            }, "tcp-proxy-" + port() + "-" + direction.name().toLowerCase(java.util.Locale.ROOT));
            t.setDaemon(true);
            t.start();
        }

        private void awaitFlow(Direction direction) throws InterruptedException, SocketException {
            synchronized (gate) {
                while (paused(direction) && !closed) {
                    gate.wait(100);
                    if (client.isClosed()) {
                        throw new SocketException("closed while paused");
                    }
                }
            }
        }

        void close() {
            links.remove(this);
            try {
                client.setSoLinger(true, 0); // a reset, not a polite close: the peer learns at once
            } catch (SocketException ignored) {
                // already closed
            }
            closeQuietly(client);
            closeQuietly(upstream);
        }
    }
}
