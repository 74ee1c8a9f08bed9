package io.fleetmq.transport;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The node's Netty event loops, shared by every listener (MQTT and admin HTTP): native epoll where
 * the platform has it, NIO elsewhere. One acceptor thread; I/O threads default to the core count
 * (at least two), not Netty's twice that: an event loop only decodes, encodes and moves bytes, the
 * work behind a packet runs elsewhere, and more loops than cores only switch between each other.
 *
 * <p>In-process connections (Netty's local transport) get loops of their own, started when the
 * first in-process listener binds. Every accepted connection is tracked, so that {@link #close}
 * closes those still open itself before it stops the loops: a loop told to stop while it is busy
 * may end without closing its channels, and a client would never learn that the node went away.
 */
public final class EventLoops implements AutoCloseable {

    private final boolean epoll;
    private final EventLoopGroup acceptors;
    private final MultiThreadIoEventLoopGroup workers;
    /** Open accepted connections of every listener; a closed channel leaves by itself. */
    private final ChannelGroup connections = new DefaultChannelGroup("fleetmq-connections",
            GlobalEventExecutor.INSTANCE);
    /** The in-process listeners' loops, once one bound; guarded by this. */
    private MultiThreadIoEventLoopGroup local;
    private boolean closed;

    public EventLoops(int ioThreads) {
        this(ioThreads, true);
    }

    /** {@code useEpoll} false: NIO even where epoll is available (tests of the NIO path). */
    EventLoops(int ioThreads, boolean useEpoll) {
        this.epoll = useEpoll && Epoll.isAvailable();
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

    /**
     * The loops of in-process connections, as many as the I/O threads, started on first use.
     *
     * @throws IllegalStateException the loops were closed
     */
    synchronized EventLoopGroup local() {
        if (closed) {
            throw new IllegalStateException("the event loops are closed");
        }
        if (local == null) {
            local = new MultiThreadIoEventLoopGroup(ioThreads(), new DefaultThreadFactory("fleetmq-local"),
                    LocalIoHandler.newFactory());
        }
        return local;
    }

    /** Tracks an accepted connection until it closes, so that {@link #close} can end it. */
    void track(Channel connection) {
        connections.add(connection);
    }

    /** How many accepted connections are open. */
    int openConnections() {
        return connections.size();
    }

    /** Closes the connections still open, then stops every group and waits for its threads to end. */
    @Override
    public void close() {
        MultiThreadIoEventLoopGroup localLoops;
        synchronized (this) {
            closed = true;
            localLoops = local;
        }
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        acceptors.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        if (localLoops != null) {
            localLoops.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
        acceptors.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        workers.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        if (localLoops != null) {
            localLoops.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}
