package io.fleetmq.bench.fleet;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.mqtt.MqttMessage;

/**
 * One device of a fleet: an index (from which its client ID and topic follow), the port it uses now,
 * and at most one connection at a time. A new connection starts only after the previous one closed,
 * so the broker never sees the same client ID twice at once from us.
 *
 * <p>A device's connections may live on different event loops one after the other; the hand-over
 * goes through the close of the previous channel, and the few fields here are volatile because the
 * coordinator reads them too.
 */
final class FleetClient {

    final int index;
    private final Fleet fleet;
    private volatile int portIndex;
    private volatile Channel channel;
    private volatile boolean closing;
    /** The next CONNECT asks for the session back (Clean Start 0): set once served with a persistent session. */
    private volatile boolean resume;
    /** This device's attempt holds one of the ramp's concurrency permits. */
    volatile boolean rampPermit;
    /** Failed attempts since the last success, for the pause after a whole round of ports failed. */
    volatile int failuresInRow;

    FleetClient(Fleet fleet, int index) {
        this.fleet = fleet;
        this.index = index;
        this.portIndex = index % fleet.ports();
    }

    int portIndex() {
        return portIndex;
    }

    /**
     * Moves on to another port of the list, another node of the cluster. After a drop the devices of
     * one port spread evenly over the others, as behind a load balancer (device {@code i} of a port
     * skips {@code (i / ports) mod (ports - 1)} of them); after a failed attempt, the next port.
     */
    void nextPort(boolean dropped) {
        portIndex = nextPort(index, portIndex, fleet.ports(), dropped);
    }

    /** The port device {@code index} on {@code current} of {@code ports} goes to; see {@link #nextPort(boolean)}. */
    static int nextPort(int index, int current, int ports, boolean dropped) {
        int step = dropped && ports > 2 ? 1 + (index / ports) % (ports - 1) : 1;
        return (current + step) % ports;
    }

    String clientId() {
        return fleet.clientId(index);
    }

    boolean closing() {
        return closing;
    }

    void resumeNextTime(boolean resume) {
        this.resume = resume;
    }

    /**
     * Starts a connection and its handshake; the outcome arrives through {@link FleetEvents}. Does
     * nothing once {@link #close()} was called, or when the event loops are shutting down.
     *
     * @return false when nothing was started, so no event will follow
     */
    boolean connect() {
        if (closing) {
            return false;
        }
        Link link = new Link(fleet, this, !resume);
        ChannelFuture opened;
        try {
            opened = fleet.open(this, link);
        } catch (RuntimeException shuttingDown) {
            return false;
        }
        fleet.stats().attempts.increment();
        Channel ch = opened.channel();
        channel = ch;
        link.opened(opened);
        if (closing) { // close() ran in between and may have missed this channel
            ch.close();
        }
        return true;
    }

    /**
     * Ends the device for good: DISCONNECT (normal disconnection) if it is served, then close. Any
     * thread. Returns the close future of its current connection, or null when it has none.
     */
    ChannelFuture close() {
        closing = true;
        Channel ch = channel;
        if (ch == null) {
            return null;
        }
        ch.eventLoop().execute(() -> {
            Link link = ch.pipeline().get(Link.class);
            if (ch.isActive() && link != null && link.served()) {
                ch.writeAndFlush(MqttMessage.DISCONNECT).addListener(ChannelFutureListener.CLOSE);
            } else {
                ch.close();
            }
        });
        return ch.closeFuture();
    }

    /** For a reconnect after a delay: runs {@code task} on the loop of the device's last connection. */
    void later(Runnable task, long delayNanos) {
        Channel ch = channel;
        try {
            if (ch == null || delayNanos <= 0) {
                task.run();
            } else {
                ch.eventLoop().schedule(task, delayNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
            }
        } catch (RuntimeException shuttingDown) {
            // the run is over
        }
    }
}
