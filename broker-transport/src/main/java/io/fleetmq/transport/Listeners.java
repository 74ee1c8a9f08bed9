package io.fleetmq.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalServerChannel;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.unix.IntegerUnixChannelOption;
import jdk.net.ExtendedSocketOptions;

/** Binds server sockets on the shared event loops. */
public final class Listeners {

    private Listeners() {
    }

    /** Linux's numbers for the socket options the listening socket passes on to accepted sockets. */
    private static final int SOL_SOCKET = 1;
    private static final int SO_KEEPALIVE = 9;
    private static final int IPPROTO_TCP = 6;
    private static final int TCP_KEEPIDLE = 4;
    private static final int TCP_KEEPINTVL = 5;
    private static final int TCP_KEEPCNT = 6;
    /** Seconds between keep-alive probes, and unanswered probes before the kernel drops the connection. */
    private static final int KEEPALIVE_INTERVAL_SECONDS = 10;
    private static final int KEEPALIVE_PROBES = 3;

    /**
     * Binds {@code host:port} (port 0 picks a free one) and installs {@code initializer} on every
     * accepted connection. Dead peers are found by TCP as well as by MQTT keep alive (which a client
     * may set to hours): after {@code tcpKeepAliveSeconds} of silence the kernel probes every 10 s
     * and drops the connection after 3 unanswered probes. With epoll these options are set once, on
     * the listening socket, whose accepted sockets inherit them (Linux does): no system call per
     * connection; with NIO, on each connection. TCP_NODELAY is Netty's default for every connection.
     *
     * @throws ListenerBindException if the address cannot be bound (in use, not local, no permission)
     */
    public static BoundListener bind(EventLoops loops, String name, String host, int port, int tcpKeepAliveSeconds,
                                     ChannelInitializer<Channel> initializer) {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loops.acceptors(), loops.workers())
                .channel(loops.serverChannelType())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(tracked(loops, initializer));
        if (loops.isEpoll()) {
            bootstrap.option(new IntegerUnixChannelOption("SO_KEEPALIVE", SOL_SOCKET, SO_KEEPALIVE), 1)
                    .option(new IntegerUnixChannelOption("TCP_KEEPIDLE", IPPROTO_TCP, TCP_KEEPIDLE), tcpKeepAliveSeconds)
                    .option(new IntegerUnixChannelOption("TCP_KEEPINTVL", IPPROTO_TCP, TCP_KEEPINTVL),
                            KEEPALIVE_INTERVAL_SECONDS)
                    .option(new IntegerUnixChannelOption("TCP_KEEPCNT", IPPROTO_TCP, TCP_KEEPCNT), KEEPALIVE_PROBES);
        } else {
            bootstrap.childOption(ChannelOption.SO_KEEPALIVE, true)
                    .childOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPIDLE), tcpKeepAliveSeconds)
                    .childOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPINTERVAL), KEEPALIVE_INTERVAL_SECONDS)
                    .childOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPCOUNT), KEEPALIVE_PROBES);
        }
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
