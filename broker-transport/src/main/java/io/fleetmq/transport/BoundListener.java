package io.fleetmq.transport;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** A listening socket: its name, the address it actually bound (port 0 resolved), and a way to close it. */
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

    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    public int port() {
        return address().getPort();
    }

    /** Stops accepting; connections already open are left to their owners. */
    @Override
    public void close() {
        channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
