package io.fleetmq.session.cluster;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets each stored message through to this node's sessions at most once.
 *
 * <p>A message is identified by its {@code publish} partition and offset. Whichever node routes a
 * partition hands this node the messages of that partition in offset order, through one downlink
 * partition (or directly, when this node routes it); before taking a partition over, a node reads its
 * downlink up to the end. So the messages of one partition reach the gate in offset order, and when a
 * node dies and the next owner routes its uncommitted records again, the repeats are exactly those at
 * or below the highest offset already let through.
 */
public final class DeliveryGate {

    private final ConcurrentMap<Integer, AtomicLong> highest = new ConcurrentHashMap<>();

    /** True the first time a message of {@code partition} at {@code offset} (or above all seen) comes. */
    public boolean admit(int partition, long offset) {
        AtomicLong h = highest.computeIfAbsent(partition, p -> new AtomicLong(-1));
        while (true) {
            long current = h.get();
            if (offset <= current) {
                return false;
            }
            if (h.compareAndSet(current, offset)) {
                return true;
            }
        }
    }
}
