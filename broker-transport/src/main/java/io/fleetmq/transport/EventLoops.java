package io.fleetmq.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The node's Netty event loops, shared by every listener (MQTT and admin HTTP): native epoll where
 * the platform has it, NIO elsewhere. One acceptor thread; I/O threads default to the core count
 * (at least two), not Netty's twice that: an event loop only decodes, encodes and moves bytes, the
 * work behind a packet runs elsewhere, and more loops than cores only switch between each other.
 */
public final class EventLoops implements AutoCloseable {

    private final boolean epoll;
    private final EventLoopGroup acceptors;
    private final MultiThreadIoEventLoopGroup workers;

    public EventLoops(int ioThreads) {
        this.epoll = Epoll.isAvailable();
        IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.acceptors = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("fleetmq-accept"), factory);
        this.workers = new MultiThreadIoEventLoopGroup(ioThreads > 0 ? ioThreads : defaultIoThreads(),
                new DefaultThreadFactory("fleetmq-io"), factory);
    }

    /** The I/O threads of {@code listeners.io-threads} 0: the cores available, at least two. */
    static int defaultIoThreads() {
        return Math.max(2, Runtime.getRuntime().availableProcessors());
    }

    /** How many I/O threads serve the listeners. */
    int ioThreads() {
        return workers.executorCount();
    }

    public boolean isEpoll() {
        return epoll;
    }

    public EventLoopGroup acceptors() {
        return acceptors;
    }

    public EventLoopGroup workers() {
        return workers;
    }

    public Class<? extends ServerChannel> serverChannelType() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** Stops both groups and waits for their threads to end. */
    @Override
    public void close() {
        acceptors.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        acceptors.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        workers.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
