package io.fleetmq.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

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

    /**
     * Accepts connections from this JVM at {@code address} (Netty's local transport) on event loops
     * of their own ({@code ioThreads}, 0 for as many as the listeners' default), and installs
     * {@code initializer} on each: the same pipeline as a socket's, with no file descriptor behind
     * it. Closing the listener stops its event loops, and with them its connections.
     */
    public static BoundListener bindInProcess(int ioThreads, String name, LocalAddress address,
                                              ChannelInitializer<Channel> initializer) {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(
                ioThreads > 0 ? ioThreads : EventLoops.defaultIoThreads(),
                new DefaultThreadFactory("fleetmq-local"), LocalIoHandler.newFactory());
        ChannelFuture future = new ServerBootstrap()
                .group(group)
                .channel(LocalServerChannel.class)
                .childHandler(initializer)
                .bind(address).awaitUninterruptibly();
        if (!future.isSuccess()) {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            throw new IllegalStateException("cannot accept in-process connections at " + address, future.cause());
        }
        return new BoundListener(name, future.channel(), () -> {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            group.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        });
    }
}
