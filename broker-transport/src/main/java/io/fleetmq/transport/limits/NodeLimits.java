package io.fleetmq.transport.limits;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node-wide side of {@link ConnectionLimits}: open connections and bytes of unfinished packets
 * across every listener, and the counter {@code fleetmq.limit.exceeded} (tag {@code limit}) of each
 * time a client reached a limit. Thread-safe; one per node.
 */
public final class NodeLimits {

    /** Channel attribute through which a connection's handlers find their node's limits. */
    public static final AttributeKey<NodeLimits> KEY = AttributeKey.valueOf("fleetmq.nodeLimits");

    /** Limit names, as the counter's tag and in docs/mqtt.md. */
    public static final String CLIENT_ID_LENGTH = "client_id_length";
    public static final String TOPIC_LENGTH = "topic_length";
    public static final String TOPIC_LEVELS = "topic_levels";
    public static final String USER_PROPERTIES = "user_properties";
    public static final String USER_PROPERTY_BYTES = "user_property_bytes";
    public static final String PACKET_TIMEOUT = "packet_timeout";
    public static final String PARTIAL_PACKET_BYTES = "partial_packet_bytes";
    public static final String CONNECTIONS = "connections";
    public static final String CONNECTION_RATE = "connection_rate";
    public static final String WRITE_BUFFER = "write_buffer";
    public static final String PUBLISH_RATE = "publish_rate";

    private final ConnectionLimits limits;
    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicLong partialBytes = new AtomicLong();

    public NodeLimits(ConnectionLimits limits, MeterRegistry registry) {
        this.limits = limits;
        this.registry = registry;
        // Every limit's series from the start, so rate() and alerts see the first time it is reached.
        for (String limit : java.util.List.of(CLIENT_ID_LENGTH, TOPIC_LENGTH, TOPIC_LEVELS, USER_PROPERTIES,
                USER_PROPERTY_BYTES, PACKET_TIMEOUT, PARTIAL_PACKET_BYTES, CONNECTIONS, CONNECTION_RATE, WRITE_BUFFER,
                PUBLISH_RATE)) {
            counter(limit);
        }
    }

    /** The defaults, counted in a registry of their own (tests and tools). */
    public static NodeLimits defaults() {
        return new NodeLimits(ConnectionLimits.defaults(), new SimpleMeterRegistry());
    }

    public ConnectionLimits limits() {
        return limits;
    }

    /** Counts one time a client reached {@code limit}. */
    public void exceeded(String limit) {
        counter(limit).increment();
    }

    private Counter counter(String limit) {
        return counters.computeIfAbsent(limit, l -> Counter.builder("fleetmq.limit.exceeded")
                .description("Times a client reached a limit of the broker, by limit")
                .tag("limit", l)
                .register(registry));
    }

    /** How many times {@code limit} was reached so far. */
    public double exceededCount(String limit) {
        Counter c = counters.get(limit);
        return c == null ? 0 : c.count();
    }

    /** Counts {@code channel} as an open connection of the node until it closes. */
    public void track(Channel channel) {
        connections.incrementAndGet();
        channel.closeFuture().addListener(f -> connections.decrementAndGet());
    }

    /** Whether more connections are open than {@link ConnectionLimits#maxConnections()}. */
    public boolean tooManyConnections() {
        return connections.get() > limits.maxConnections();
    }

    public int connections() {
        return connections.get();
    }

    /**
     * Changes the node's bytes of unfinished packets by {@code delta}; a growth that would pass
     * {@link ConnectionLimits#maxPartialPacketBytes()} is not taken and false returned.
     */
    public boolean holdPartial(long delta) {
        if (delta <= 0) {
            partialBytes.addAndGet(delta);
            return true;
        }
        while (true) {
            long now = partialBytes.get();
            if (now + delta > limits.maxPartialPacketBytes()) {
                return false;
            }
            if (partialBytes.compareAndSet(now, now + delta)) {
                return true;
            }
        }
    }

    public long partialBytes() {
        return partialBytes.get();
    }
}
