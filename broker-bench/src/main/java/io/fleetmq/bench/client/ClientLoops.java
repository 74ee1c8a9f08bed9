package io.fleetmq.bench.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The event loops every client of a run shares: a few threads carry hundreds of connections, which
 * is what lets one small machine play a whole fleet. Native epoll where available, NIO otherwise.
 */
public final class ClientLoops implements AutoCloseable {

    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /**
     * Small water marks on purpose: a publisher stops at 64 KiB of unsent data instead of hiding a
     * backlog in its own memory, so back-pressure from the broker shows up as a lower publish rate.
     */
    private static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(32 * 1024, 64 * 1024);

    /**
     * A fleet connection reads CONNACK, SUBACK and PINGRESP, a few bytes each: the first read guess is
     * 256 bytes rather than Netty's 2 KiB, and it grows only if something large does arrive.
     */
    private static final AdaptiveRecvByteBufAllocator SMALL_READS = new AdaptiveRecvByteBufAllocator(64, 256, 64 * 1024);
    /** A fleet connection writes CONNECT, SUBSCRIBE and PINGREQ; nothing ever queues. */
    private static final WriteBufferWaterMark FLEET_WATER_MARK = new WriteBufferWaterMark(2 * 1024, 8 * 1024);

    private final boolean epoll;
    private final int threads;
    private final EventLoopGroup group;
    /** The subscribers' own threads; the same as {@link #group} when they share it. */
    private final EventLoopGroup subscriberGroup;

    public ClientLoops(int threads) {
        this(threads, 0);
    }

    /** @param subscriberThreads threads of the subscribers' own; 0 to share {@code threads} */
    public ClientLoops(int threads, int subscriberThreads) {
        this.epoll = Epoll.isAvailable();
        this.threads = threads + subscriberThreads;
        IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("bench-io"), factory);
        this.subscriberGroup = subscriberThreads == 0 ? group
                : new MultiThreadIoEventLoopGroup(subscriberThreads, new DefaultThreadFactory("bench-sub-io"), factory);
    }

    /** {@code epoll} or {@code nio}, for the report. */
    public String transport() {
        return epoll ? "epoll" : "nio";
    }

    /**
     * Opens a TCP connection and starts the MQTT handshake on it; {@link MqttConnection#connected()}
     * tells how it ends.
     */
    public MqttConnection connect(String host, int port, MqttConnection connection, int maxPacketBytes) {
        return connect(host, port, connection, maxPacketBytes, false);
    }

    /** @param subscriber the connection goes on the subscribers' threads */
    public MqttConnection connect(String host, int port, MqttConnection connection, int maxPacketBytes,
                                  boolean subscriber) {
        Bootstrap bootstrap = new Bootstrap()
                .group(subscriber ? subscriberGroup : group)
                .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                // Latency is what we measure: never let Nagle hold a small publish back.
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(
                                new IdleStateHandler(0, connection.keepAliveSeconds() / 2, 0, TimeUnit.SECONDS),
                                new MqttDecoder(maxPacketBytes),
                                MqttEncoder.INSTANCE,
                                connection);
                    }
                });
        ChannelFuture future = bootstrap.connect(host, port);
        Channel channel = future.channel();
        connection.attach(channel);
        future.addListener(f -> {
            if (!f.isSuccess()) {
                connection.failConnect("cannot open TCP connection to " + host + ":" + port + ": " + f.cause());
            }
        });
        return connection;
    }

    /**
     * Opens a TCP connection whose pipeline is just the MQTT codec and {@code handler}: for short-lived
     * connections that need no keep-alive, such as the connect scenario's handshakes.
     */
    public ChannelFuture open(String host, int port, ChannelHandler handler, int maxPacketBytes) {
        return open(host, port, handler, maxPacketBytes, null);
    }

    /** @param tls null for plain TCP; otherwise the TLS handshake runs first, for the broker at {@code host} */
    public ChannelFuture open(String host, int port, ChannelHandler handler, int maxPacketBytes, SslContext tls) {
        return new Bootstrap()
                .group(group)
                .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc(), host, port));
                        }
                        ch.pipeline().addLast(new MqttDecoder(maxPacketBytes), MqttEncoder.INSTANCE, handler);
                    }
                })
                .connect(host, port);
    }

    /**
     * A template for a fleet of long-lived, mostly idle connections (the idle and storm scenarios):
     * no handler yet, {@link Bootstrap#clone()} it and add one per connection. What each connection
     * costs the generator must stay small, so that 100,000 of them fit in a 2 GiB heap: pooled buffers
     * (a read borrows one and gives it back at once, so an idle connection holds none), small read
     * guesses and water marks, and no per-connection resolver work (the caller passes resolved
     * addresses). The kernel's socket buffers are left alone: an idle socket holds no data in them.
     *
     * @param boundToSource the connections bind a chosen local address: with epoll the kernel then picks
     *                      the local port at connect time, per destination (IP_BIND_ADDRESS_NO_PORT), instead
     *                      of reserving one for the address at bind time, which would cap each address at one
     *                      ephemeral range for all broker ports together
     */
    public Bootstrap fleetBootstrap(boolean boundToSource) {
        Bootstrap bootstrap = new Bootstrap()
                .group(group)
                .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.RCVBUF_ALLOCATOR, SMALL_READS)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, FLEET_WATER_MARK);
        if (epoll && boundToSource) {
            bootstrap.option(EpollChannelOption.IP_BIND_ADDRESS_NO_PORT, true);
        }
        return bootstrap;
    }

    /** Event-loop threads in this generator, for the report. */
    public int threads() {
        return threads;
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        if (subscriberGroup != group) {
            subscriberGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }
}
