package io.fleetmq.session.cluster;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Lets each stored message through to this node's sessions at most once.
 *
 * <p>A message is identified by its {@code publish} partition and offset. Whichever node routes a
 * partition hands this node the messages of that partition in offset order, through one downlink
 * partition (or directly, when this node routes it); before taking a partition over, a node reads its
 * downlink up to the end. So the messages of one partition reach the gate in offset order, and when a
 * node dies and the next owner routes its uncommitted records again, the repeats are exactly those at
 * or below the highest offset already let through.
 *
 * <p>A message for many subscribers may come in several parts (a downlink record split below
 * Kafka's record limit), each for other subscribers; the parts are written in order to the same
 * downlink partition, so the gate orders by offset, then part: every part passes once.
 */
public final class DeliveryGate {

    private record Position(long offset, int part) {
    }

    private final ConcurrentMap<Integer, AtomicReference<Position>> highest = new ConcurrentHashMap<>();

    /** True the first time a message of {@code partition} at {@code offset} (or above all seen) comes. */
    public boolean admit(int partition, long offset) {
        return admit(partition, offset, 0);
    }

    /** True the first time part {@code part} of the message at {@code offset} of {@code partition} comes. */
    public boolean admit(int partition, long offset, int part) {
        AtomicReference<Position> h = highest.computeIfAbsent(partition, p -> new AtomicReference<>(new Position(-1, 0)));
        Position next = new Position(offset, part);
        while (true) {
            Position current = h.get();
            if (offset < current.offset() || offset == current.offset() && part <= current.part()) {
                return false;
            }
            if (h.compareAndSet(current, next)) {
                return true;
            }
        }
    }
}
