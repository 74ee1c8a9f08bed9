package io.fleetmq.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalServerChannel;

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
                .childHandler(tracked(loops, initializer));
        ChannelFuture future = bootstrap.bind(host, port).awaitUninterruptibly();
        if (!future.isSuccess()) {
            throw new ListenerBindException(name, host, port, future.cause());
        }
        return new BoundListener(name, future.channel());
    }

    /**
     * Accepts connections from this JVM at {@code address} (Netty's local transport) on the
     * in-process loops of {@code loops}, and installs {@code initializer} on each: the same pipeline
     * as a socket's, with no file descriptor behind it. Closing the listener stops accepting; the
     * connections end as a socket's do, with the node's sessions and at the latest with
     * {@code loops}.
     *
     * @throws IllegalStateException the address is taken, or {@code loops} are closed
     */
    public static BoundListener bindInProcess(EventLoops loops, String name, LocalAddress address,
                                              ChannelInitializer<Channel> initializer) {
        ChannelFuture future = new ServerBootstrap()
                .group(loops.local())
                .channel(LocalServerChannel.class)
                .childHandler(tracked(loops, initializer))
                .bind(address).awaitUninterruptibly();
        if (!future.isSuccess()) {
            throw new IllegalStateException("cannot accept in-process connections at " + address, future.cause());
        }
        return new BoundListener(name, future.channel());
    }

    /** {@code initializer}, with each connection tracked by {@code loops} first. */
    private static ChannelInitializer<Channel> tracked(EventLoops loops, ChannelInitializer<Channel> initializer) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                loops.track(ch);
                ch.pipeline().addLast(initializer);
            }
        };
    }
}
