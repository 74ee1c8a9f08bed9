package io.fleetmq.session.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class RoutingOrderTest {

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final RoutingOrder order = new RoutingOrder(meters);
    /** Offsets routed, by either path, in the order they were routed. */
    private final List<Long> routed = Collections.synchronizedList(new ArrayList<>());

    private boolean stored(int partition, long offset) {
        return order.stored(partition, offset, () -> routed.add(offset));
    }

    private boolean read(int partition, long offset) {
        return order.read(partition, offset, () -> routed.add(offset));
    }

    @Test
    void aNewlyOwnedPartitionRoutesNothingEarlyUntilTheConsumerReadOneOfItsRecords() {
        assertFalse(stored(0, 0), "not owned yet");
        order.owned(Set.of(0));
        assertFalse(stored(0, 0), "owned, but where the consumer starts is not known");
        assertTrue(read(0, 0));
        assertTrue(stored(0, 1), "the partition's next record");
        assertTrue(stored(0, 2));
        assertFalse(read(0, 1), "routed when stored");
        assertFalse(read(0, 2));
        assertTrue(read(0, 3), "a record of another node, never stored here");
        assertEquals(List.of(0L, 1L, 2L, 3L), routed);
        assertEquals(2.0, meters.get("fleetmq.publish.routed").tag("when", "stored").counter().count());
        assertEquals(2.0, meters.get("fleetmq.publish.routed").tag("when", "read").counter().count());
    }

    @Test
    void aWriteStoredAfterARecordNotYetRoutedWaitsForTheConsumer() {
        order.owned(Set.of(3));
        read(3, 4);
        assertFalse(stored(3, 6), "offset 5 is another node's, not routed yet");
        assertTrue(read(3, 5));
        assertTrue(read(3, 6), "left to the consumer");
        assertTrue(stored(3, 7));
        assertEquals(List.of(4L, 5L, 6L, 7L), routed);
    }

    @Test
    void aMessageTheRouterCannotRouteAloneLeavesItAndTheRecordsAfterItToTheConsumer() {
        order.owned(Set.of(0));
        read(0, 0);
        assertFalse(order.stored(0, 1, () -> false), "say, a subscriber on another node");
        AtomicBoolean asked = new AtomicBoolean();
        assertFalse(order.stored(0, 2, () -> asked.getAndSet(true)), "offset 1 is not routed yet");
        assertFalse(asked.get(), "the router is not even asked");
        assertTrue(read(0, 1));
        assertTrue(read(0, 2));
        assertTrue(stored(0, 3), "caught up");
        assertEquals(List.of(0L, 1L, 2L, 3L), routed);
    }

    @Test
    void aBatchReadAgainIsRoutedAgainInFull() {
        order.owned(Set.of(1));
        read(1, 10);
        stored(1, 11);
        stored(1, 12);
        assertFalse(read(1, 11));
        assertFalse(read(1, 12));
        // The batch's writes failed: the consumer reads it again from its first record.
        assertTrue(read(1, 10));
        assertTrue(read(1, 11), "routed again, though routed when stored; the delivery gate drops the repeat");
        assertTrue(read(1, 12));
        assertTrue(stored(1, 13));
        assertEquals(List.of(10L, 11L, 12L, 10L, 11L, 12L, 13L), routed);
    }

    @Test
    void aPartitionNoLongerOwnedRoutesNothingEarlyAndStartsAfreshWhenOwnedAgain() {
        order.owned(Set.of(0, 1));
        read(0, 0);
        read(1, 0);
        order.owned(Set.of(1));
        assertFalse(stored(0, 1), "another node routes it now");
        assertTrue(stored(1, 1));
        order.owned(Set.of(0, 1));
        assertFalse(stored(0, 5), "owned again: where the consumer starts is not known yet");
        assertTrue(read(0, 3), "the consumer starts at the last committed offset");
        assertTrue(stored(1, 2), "a partition owned throughout keeps its place");
    }

    @Test
    void whileTheConsumerRoutesAPartitionAConfirmedWriteIsLeftToItWithoutWaiting() throws Exception {
        order.owned(Set.of(0));
        read(0, 0);
        boolean[] early = new boolean[1];
        order.read(0, 1, () -> {
            Thread producer = new Thread(() -> early[0] = stored(0, 2));
            producer.start();
            try {
                producer.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            assertFalse(producer.isAlive(), "the producer's thread must not wait for the consumer");
            routed.add(1L);
        });
        assertFalse(early[0]);
        assertTrue(read(0, 2));
        assertEquals(List.of(0L, 1L, 2L), routed);
    }

    /**
     * The producer's thread is told of this node's writes in offset order while the consumer reads
     * the same partition behind it, with some records written by another node and some the router
     * cannot route alone: every record is routed exactly once, in offset order.
     */
    @Test
    void bothPathsTogetherRouteEveryRecordOnceInOffsetOrder() throws Exception {
        int records = 200_000;
        order.owned(Set.of(0));
        AtomicLong written = new AtomicLong(-1);
        AtomicLong readUpTo = new AtomicLong(-1);
        Thread producer = new Thread(() -> {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (long o = 0; o < records; o++) {
                long offset = o;
                if (o % 100 == 0 && o > 0) {
                    // Now and then the confirmation comes when the consumer has routed everything
                    // before it and has not fetched this record yet: it must be routed at once.
                    while (readUpTo.get() < o - 1) {
                        Thread.yield();
                    }
                    order.stored(0, offset, () -> routed.add(offset));
                    written.set(offset);
                    continue;
                }
                int kind = o % 100 == 50 ? 0 : random.nextInt(10);
                written.set(offset); // stored: the consumer may read it from now on
                if (kind == 0) {
                    continue; // another node's write
                }
                order.stored(0, offset, () -> kind != 1 && routed.add(offset)); // 1: not routable alone
            }
        });
        producer.start();
        for (long o = 0; o < records; o++) {
            while (written.get() < o) {
                Thread.yield();
            }
            read(0, o);
            readUpTo.set(o);
        }
        producer.join();
        assertEquals(LongStream.range(0, records).boxed().toList(), routed);
        assertTrue(order.routedStored() >= records / 100 - 1 && order.routedRead() >= records / 100,
                order.routedStored() + " routed when stored, " + order.routedRead() + " when read");
    }
}
