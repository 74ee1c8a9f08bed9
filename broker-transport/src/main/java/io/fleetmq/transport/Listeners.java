package io.fleetmq.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;

/** Binds server sockets on the shared event loops. */
public final class Listeners {

    private Listeners() {
    }

    /**
     * Binds {@code host:port} (port 0 picks a free one) and installs {@code initializer} on every
     * accepted connection.
     *
     * @throws ListenerBindException if the address cannot be bound (in use, not local, no permission)
     */
    public static BoundListener bind(EventLoops loops, String name, String host, int port,
                                     ChannelInitializer<Channel> initializer) {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loops.acceptors(), loops.workers())
                .channel(loops.serverChannelType())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(initializer);
        ChannelFuture future = bootstrap.bind(host, port).awaitUninterruptibly();
        if (!future.isSuccess()) {
            throw new ListenerBindException(name, host, port, future.cause());
        }
        return new BoundListener(name, future.channel());
    }
}
