package io.fleetmq.bench.fleet;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.ClientLoops;
import io.fleetmq.bench.scenario.Scenario;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What all devices of one idle or storm run share: the resolved broker and source addresses, one
 * bootstrap template, the naming of client IDs and topics, where events and counts go. The devices
 * themselves hold little more than their index, so that a fleet of 100,000 costs the generator a few
 * megabytes beside Netty's own per-channel objects.
 */
final class Fleet {

    /** Longest wait for a CONNACK, and again for a SUBACK. */
    static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    /** Devices receive nothing unless someone publishes to their topics; this only bounds a stray packet. */
    static final int MAX_PACKET_BYTES = 1024 * 1024;

    final BenchOptions options;
    final String runId;
    final MqttQoS qos;
    final FleetEvents events;
    private final Bootstrap template;
    private final InetSocketAddress[] remotes;
    private final InetSocketAddress[] locals;
    private final long readerIdleMillis;
    private final long writerIdleMillis;
    private volatile FleetStats stats;

    Fleet(BenchOptions options, String runId, ClientLoops loops, FleetEvents events, FleetStats stats) {
        this.options = options;
        this.runId = runId;
        this.qos = MqttQoS.valueOf(options.qos());
        this.events = events;
        this.stats = stats;
        List<InetAddress> sources = options.fleet().sourceAddresses();
        this.template = loops.fleetBootstrap(!sources.isEmpty());
        List<Integer> ports = options.ports();
        this.remotes = new InetSocketAddress[ports.size()];
        for (int i = 0; i < remotes.length; i++) {
            // Resolved once: a fleet must not ask the resolver 100,000 times.
            remotes[i] = new InetSocketAddress(options.host(), ports.get(i));
        }
        this.locals = new InetSocketAddress[sources.size()];
        for (int i = 0; i < locals.length; i++) {
            locals[i] = new InetSocketAddress(sources.get(i), 0);
        }
        int keepAlive = options.fleet().keepAliveSeconds();
        // PINGREQ after half the keep-alive without a write; give up after 1.5 of it without a read, the
        // same grace a broker gives a silent client [MQTT-3.1.2-24].
        this.writerIdleMillis = keepAlive * 1000L / 2;
        this.readerIdleMillis = keepAlive * 1500L;
    }

    int ports() {
        return remotes.length;
    }

    FleetStats stats() {
        return stats;
    }

    /** Counts from now on go to {@code next}: a storm keeps the ramp's counts apart from its own. */
    void stats(FleetStats next) {
        this.stats = next;
    }

    String clientId(int index) {
        return Scenario.deviceId(runId, index);
    }

    String topic(int index) {
        return Scenario.deviceTopic(options.fleet().topicPrefix(), runId, index);
    }

    int subscriptions() {
        return options.fleet().subscriptions();
    }

    int keepAliveSeconds() {
        return options.fleet().keepAliveSeconds();
    }

    /** Opens a connection for {@code device} to its current port, from its source address; {@code link} drives it. */
    ChannelFuture open(FleetClient device, Link link) {
        Bootstrap bootstrap = template.clone().handler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                if (writerIdleMillis > 0) {
                    ch.pipeline().addLast(new IdleStateHandler(readerIdleMillis, writerIdleMillis, 0,
                            TimeUnit.MILLISECONDS));
                }
                ch.pipeline().addLast(new MqttDecoder(MAX_PACKET_BYTES), MqttEncoder.INSTANCE, link);
            }
        });
        InetSocketAddress remote = remotes[device.portIndex()];
        return locals.length == 0 ? bootstrap.connect(remote) : bootstrap.connect(remote,
                locals[sourceOf(device.index, remotes.length, locals.length)]);
    }

    /**
     * Device i starts on port {@code i mod P} and binds source address {@code (i / P) mod S}: every
     * pair of source address and port gets its share, where {@code i mod S} would leave pairs unused
     * whenever P and S have a common factor (two ports and two addresses: only two of the four pairs).
     */
    static int sourceOf(int index, int ports, int sources) {
        return (index / ports) % sources;
    }

    /**
     * Ends every device: DISCONNECT and close. Returns false when some connections were still open
     * after {@code timeout}; the event loops' shutdown closes those.
     */
    static boolean closeAll(FleetClient[] devices, Duration timeout) {
        AtomicInteger open = new AtomicInteger(1);
        CountDownLatch done = new CountDownLatch(1);
        for (FleetClient device : devices) {
            ChannelFuture closed = device.close();
            if (closed != null) {
                open.incrementAndGet();
                closed.addListener(f -> {
                    if (open.decrementAndGet() == 0) {
                        done.countDown();
                    }
                });
            }
        }
        if (open.decrementAndGet() == 0) {
            done.countDown();
        }
        try {
            return done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
