package io.fleetmq.session;

import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The persistent DEVICE sessions connected to this node that take their messages from the node's
 * {@code device.persisted} writer before the messages are stored in Redis.
 *
 * <p>A session that keeps up with its messages costs its queue nothing this way: the writer hands
 * it a batch, the session sends what the client's window takes at once, and a message counts as
 * settled when the client acknowledged it or when it is stored. The writer commits its batch only
 * once every message of it settled, so a node that dies before then leaves the batch to be read
 * again by the next owner: a message acknowledged in that window is delivered twice (QoS 1
 * allows), none is lost. What the session cannot send at once, what is not acknowledged within
 * {@link #ackWait} (50 ms by default), QoS 2, and whatever it holds when its connection
 * ends, it stores in its queue itself, in order, with the packet identifiers of what went out.
 *
 * <p>A client's messages go to its lane or to Redis directly per batch as a whole, and a batch of
 * {@code device.persisted} is read only once the one before it settled: so what the lane holds is
 * always older than anything the writer stores directly afterwards, and a lane is registered
 * until it holds nothing.
 */
public final class LiveDeliveries {

    /**
     * One record of {@code device.persisted}, handed to a session before it is stored, with where it
     * was read ({@code partition} and {@code offset} of {@code device.persisted}: a batch read again
     * hands the same positions over again).
     */
    public record Offered(int partition, long offset, Downlink downlink, byte[] encoded) {
    }

    /** A connected session's side of the hand-off. */
    public interface Lane {

        /**
         * Hands over a client's messages of one batch, in order; completes once each is acknowledged
         * by the client or stored, and fails if the session can take nothing (it ended).
         */
        CompletableFuture<Void> offer(List<Offered> records);
    }

    /** Tells the readers of a queue on other nodes of entries a lane stored (the writer's notices). */
    @FunctionalInterface
    public interface Notifier {
        void stored(String clientId, DeviceQueues.Appends appends, List<Downlink> downlinks);
    }

    private final ConcurrentHashMap<String, Lane> lanes = new ConcurrentHashMap<>();
    private final LongAdder acknowledged = new LongAdder();
    private final LongAdder stored = new LongAdder();
    private volatile Notifier notifier = (c, a, d) -> { };
    private volatile boolean enabled = true;
    private volatile long ackWaitMillis = DeviceQueueReader.LIVE_ACK_BOUND_MILLIS;
    /** Messages handed over and not settled yet, over all lanes. */
    private final LongAdder held = new LongAdder();

    /** Whether sessions take messages before they are stored; when off, every message is stored first. */
    public void enabled(boolean on) {
        this.enabled = on;
    }

    public boolean enabled() {
        return enabled;
    }

    /** How long a message sent before it was stored waits for its acknowledgement before it is stored. */
    public void ackWait(java.time.Duration wait) {
        this.ackWaitMillis = Math.max(1, wait.toMillis());
    }

    long ackWaitMillis() {
        return ackWaitMillis;
    }

    void held(int delta) {
        held.add(delta);
    }

    /** Messages handed over to sessions and neither acknowledged nor stored yet. */
    public long heldCount() {
        return held.sum();
    }

    /** The lane of a client connected here, or null: its messages go to Redis directly. */
    public Lane lane(String clientId) {
        return lanes.get(clientId);
    }

    /** The session of a client connected here takes its messages through {@code lane} from now on. */
    public void register(String clientId, Lane lane) {
        lanes.put(clientId, lane);
    }

    void unregister(String clientId, Lane lane) {
        lanes.remove(clientId, lane);
    }

    /** Lanes registered now. */
    public int size() {
        return lanes.size();
    }

    public void notifier(Notifier n) {
        this.notifier = n;
    }

    Notifier notifier() {
        return notifier;
    }

    void acknowledged() {
        acknowledged.increment();
    }

    void stored(int n) {
        stored.add(n);
    }

    /** Messages of lanes acknowledged by their clients before they were stored. */
    public long acknowledgedCount() {
        return acknowledged.sum();
    }

    /** Messages of lanes the sessions stored in their queues. */
    public long storedCount() {
        return stored.sum();
    }

    /** {@code fleetmq.device.queue.live} by outcome. */
    public void meters(MeterRegistry meters) {
        String description = "Messages for persistent DEVICE sessions connected to the writing node, handed to the"
                + " session before they were stored: acknowledged by the client (never written to Redis), or stored";
        FunctionCounter.builder("fleetmq.device.queue.live", acknowledged, LongAdder::sum)
                .tag("outcome", "acknowledged").description(description).register(meters);
        FunctionCounter.builder("fleetmq.device.queue.live", stored, LongAdder::sum)
                .tag("outcome", "stored").description(description).register(meters);
        io.micrometer.core.instrument.Gauge.builder("fleetmq.device.queue.live.held", held, LongAdder::sum)
                .description("Messages handed to persistent DEVICE sessions before they were stored, neither"
                        + " acknowledged nor stored yet: a node that dies now sends them again")
                .register(meters);
        io.micrometer.core.instrument.Gauge.builder("fleetmq.device.queue.live.sessions", lanes, Map::size)
                .description("Persistent DEVICE sessions connected here that take their messages before they are"
                        + " stored, or still hold some")
                .register(meters);
    }
}
