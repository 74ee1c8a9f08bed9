package io.fleetmq.session;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts every message the broker does not deliver, by reason (promise 5: nothing is lost
 * silently). Exposed as {@code fleetmq_messages_dropped_total{reason=...}}. A caller that knows
 * the client and topic tells them too ({@link #count(Reason, String, String)}), and the drop is
 * kept in the node's {@link RecentDrops} for the admin API; paths that drop many messages at once
 * or under overload only count ({@link #count(Reason, long)}), which allocates nothing.
 */
public final class MessageDrops {

    /** Why a message was not delivered to one subscriber. */
    public enum Reason {
        /** Its message expiry interval passed before it could be sent. */
        EXPIRED,
        /** QoS 0 while the client's socket was not writable and its bounded queue was full. */
        QOS0_QUEUE_FULL,
        /** QoS 0 for a client that is not connected (QoS 0 is not queued for offline sessions). */
        CLIENT_OFFLINE_QOS0,
        /** The session's bounded QoS 1/2 queue was full; the oldest message went. */
        SESSION_QUEUE_FULL,
        /** Larger than the client's Maximum Packet Size. */
        PACKET_TOO_LARGE,
        /** A PUBLISH (or will) Kafka did not confirm; never acknowledged to the publisher. */
        PUBLISH_NOT_STORED,
        /** Routed to a session that no longer exists. */
        NO_SESSION,
        /** Queued or unacknowledged when its session ended. */
        SESSION_ENDED,
        /** Queued or unacknowledged on this node when the session was taken over by another node. */
        SESSION_MOVED,
        /** For a session on a node that is gone, before the client reconnected elsewhere. */
        NODE_DOWN,
        /** The session failed while handling it (a defect, logged with the client ID). */
        DELIVERY_FAILED,
        /** A stored record (DEVICE queue entry, backlog record) that does not decode. */
        MALFORMED_RECORD,
        /** A PUBLISH or will to a topic its client may not publish to. */
        NOT_AUTHORIZED
    }

    private final MeterRegistry registry;
    private final Map<Reason, Counter> counters = new ConcurrentHashMap<>();
    private final RecentDrops recent;
    private final java.util.function.LongSupplier clock;

    public MessageDrops(MeterRegistry registry) {
        this(registry, new RecentDrops(), System::currentTimeMillis);
    }

    /** @param recent where dropped messages with their client and topic are kept; the node's, outliving incarnations */
    public MessageDrops(MeterRegistry registry, RecentDrops recent, java.util.function.LongSupplier clock) {
        this.registry = registry;
        this.recent = recent;
        this.clock = clock;
    }

    /** The recent drops told with their client and topic. */
    public RecentDrops recent() {
        return recent;
    }

    /** Counts one message dropped for {@code clientId} (null if none) on {@code topic}, and keeps it among the recent drops. */
    public void count(Reason reason, String clientId, String topic) {
        counter(reason).increment();
        recent.add(clock.getAsLong(), label(reason), clientId, topic);
    }

    /** The reason as the meter's tag and the admin API show it. */
    public static String label(Reason reason) {
        return reason.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Counts {@code n} messages dropped for one reason. */
    public void count(Reason reason, long n) {
        if (n > 0) {
            counter(reason).increment(n);
        }
    }

    public void count(Reason reason) {
        counter(reason).increment();
    }

    private Counter counter(Reason reason) {
        Counter counter = counters.get(reason);
        if (counter == null) {
            // Only the first drop of a reason registers its counter; an overloaded subscriber can
            // drop hundreds of thousands a second, so the common case allocates nothing.
            counter = counters.computeIfAbsent(reason, r -> Counter.builder("fleetmq.messages.dropped")
                    .description("Messages not delivered, by reason")
                    .tag("reason", label(r))
                    .register(registry));
        }
        return counter;
    }
}
