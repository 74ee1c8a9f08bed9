package io.fleetmq.session.cluster;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Lets the node route a PUBLISH it wrote as soon as Kafka confirms the write, instead of a fetch
 * later when its routing consumer reads it back, while keeping what {@link DeliveryGate} and the
 * promises rest on: a node routes the records of a {@code publish} partition it owns once each, in
 * offset order, with no gap.
 *
 * <p>For each partition this node owns it keeps {@code next}, the lowest offset not routed yet. A
 * confirmed write at offset {@code o} is routed at once only if {@code o == next} and the router can
 * route it entirely on its own ({@link #stored}); anything else (a write of another node, one stored
 * before an earlier record was routed, a message for a queue, a backlog or another node, a retained
 * message) is left to the routing consumer, which routes every record at or above
 * {@code next} and skips those below ({@link #read}). Until the consumer has read a record of a
 * newly owned partition {@code next} is unknown and nothing is routed early, so a node that takes
 * a partition over first reads what the previous owner handed it.
 *
 * <p>A batch the consumer reads again (its writes failed) comes back with lower offsets than it
 * read last: {@code next} goes back with it, so the batch is routed again in full, and the gate
 * drops what this node's sessions already got.
 *
 * <p>Each partition has a lock: the consumer holds it while it routes a record, the producer's I/O
 * thread only tries it, and leaves the record to the consumer rather than wait.
 */
public final class RoutingOrder {

    private static final long UNKNOWN = -1;

    private static final class Partition {
        final ReentrantLock lock = new ReentrantLock();
        /** The lowest offset not routed yet, or {@link #UNKNOWN}. */
        long next = UNKNOWN;
        /** The offset the consumer read last, to see a batch read again. */
        long lastRead = UNKNOWN;
        boolean owned = true;
    }

    private final ConcurrentMap<Integer, Partition> partitions = new ConcurrentHashMap<>();
    private final Counter routedStored;
    private final Counter routedRead;

    public RoutingOrder(MeterRegistry meters) {
        this.routedStored = routed(meters, "stored");
        this.routedRead = routed(meters, "read");
    }

    private static Counter routed(MeterRegistry meters, String when) {
        return Counter.builder("fleetmq.publish.routed")
                .description("PUBLISH records this node routed: when Kafka confirmed its own write of them"
                        + " (stored), or when its routing consumer read them back (read)")
                .tag("when", when)
                .register(meters);
    }

    /**
     * The partitions this node routes now. One newly owned starts with {@code next} unknown; one no
     * longer owned routes nothing early from here on.
     */
    public void owned(Set<Integer> now) {
        for (var e : partitions.entrySet()) {
            if (!now.contains(e.getKey())) {
                Partition p = e.getValue();
                p.lock.lock();
                try {
                    p.owned = false;
                } finally {
                    p.lock.unlock();
                }
                partitions.remove(e.getKey(), p);
            }
        }
        for (int partition : now) {
            partitions.computeIfAbsent(partition, k -> new Partition());
        }
    }

    /**
     * A write of this node to {@code partition} at {@code offset} is confirmed: routes it with
     * {@code routeHere} if it is the partition's next record and nobody routes the partition right
     * now. {@code routeHere} answers whether it routed the message entirely; false leaves it, and the
     * records after it, to the consumer. Never waits.
     *
     * @return whether the record is routed
     */
    public boolean stored(int partition, long offset, BooleanSupplier routeHere) {
        Partition p = partitions.get(partition);
        if (p == null || !p.lock.tryLock()) {
            return false;
        }
        try {
            if (!p.owned || p.next != offset || !routeHere.getAsBoolean()) {
                return false;
            }
            p.next = offset + 1;
            routedStored.increment();
            return true;
        } finally {
            p.lock.unlock();
        }
    }

    /**
     * The routing consumer read the record at {@code offset} of {@code partition}: runs {@code route}
     * unless the record was routed when its write was confirmed. Runs on the consumer's thread.
     *
     * @return whether {@code route} ran
     */
    public boolean read(int partition, long offset, Runnable route) {
        Partition p = partitions.get(partition);
        if (p == null) {
            route.run(); // not told of the partition: route as if nothing were routed early
            routedRead.increment();
            return true;
        }
        p.lock.lock();
        try {
            if (p.lastRead != UNKNOWN && offset <= p.lastRead) {
                p.next = offset; // the batch is read again: route it again, all of it
            }
            p.lastRead = offset;
            if (p.next != UNKNOWN && offset < p.next) {
                return false;
            }
            p.next = offset + 1;
            route.run();
            routedRead.increment();
            return true;
        } finally {
            p.lock.unlock();
        }
    }

    /** Records routed when their write was confirmed. */
    public long routedStored() {
        return (long) routedStored.count();
    }

    /** Records routed when the routing consumer read them. */
    public long routedRead() {
        return (long) routedRead.count();
    }
}
