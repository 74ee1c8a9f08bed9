package io.fleetmq.transport;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A listening socket (or an in-process listener, see {@link Listeners#bindInProcess}): its name, the
 * address it actually bound (port 0 resolved), and a way to close it.
 */
public final class BoundListener implements AutoCloseable {

    private final String name;
    private final Channel channel;

    BoundListener(String name, Channel channel) {
        this.name = name;
        this.channel = channel;
    }

    public String name() {
        return name;
    }

    /** The socket address bound; for an in-process listener see {@link #localAddress()}. */
    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    /** The address bound, of whatever transport. */
    public java.net.SocketAddress localAddress() {
        return channel.localAddress();
    }

    public int port() {
        return address().getPort();
    }

    /** Stops accepting; connections already open are left to their owners, and end with the event loops at the latest. */
    @Override
    public void close() {
        channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
