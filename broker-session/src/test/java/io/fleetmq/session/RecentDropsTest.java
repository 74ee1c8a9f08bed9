package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecentDropsTest {

    @Test
    void keepsTheNewestWithinItsCapacityAndCutsLongText() {
        RecentDrops ring = new RecentDrops(3);
        for (int i = 0; i < 5; i++) {
            ring.add(i, "expired", "c" + i, "t/" + i);
        }
        List<RecentDrops.Drop> all = ring.all();
        assertEquals(List.of("c2", "c3", "c4"), all.stream().map(RecentDrops.Drop::clientId).toList());
        assertEquals(List.of(2L, 3L, 4L), all.stream().map(RecentDrops.Drop::sequence).toList());
        assertEquals(List.of("c4"), ring.since(4).stream().map(RecentDrops.Drop::clientId).toList());
        assertEquals(List.of(), ring.since(5));
        assertEquals(5, ring.written());

        ring.add(9, "expired", "x".repeat(1000), null);
        assertEquals(RecentDrops.MAX_TEXT, ring.since(5).get(0).clientId().length());
    }

    @Test
    void aReaderFollowingTheRingSeesEveryDropOnceWhileOthersAdd() throws Exception {
        int writers = 3;
        int each = 100_000;
        RecentDrops ring = new RecentDrops(writers * each); // nothing is overwritten: every drop must be seen
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        List<Thread> threads = new java.util.ArrayList<>();
        for (int w = 0; w < writers; w++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < each; i++) {
                    ring.add(i, "expired", "c", "t");
                }
            });
            t.start();
            threads.add(t);
        }
        java.util.BitSet seen = new java.util.BitSet(writers * each);
        long cursor = 0;
        int duplicates = 0;
        go.countDown();
        while (cursor < (long) writers * each) {
            RecentDrops.Batch batch = ring.after(cursor);
            for (RecentDrops.Drop d : batch.drops()) {
                if (seen.get((int) d.sequence())) {
                    duplicates++;
                }
                seen.set((int) d.sequence());
            }
            cursor = batch.next();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(0, duplicates);
        assertEquals(writers * each, seen.cardinality(), "drops the reader skipped");
    }

    @Test
    void aReaderThatFellBehindGoesOnFromTheOldestDropHeld() {
        RecentDrops ring = new RecentDrops(4);
        ring.add(1, "expired", "a", "t");
        RecentDrops.Batch batch = ring.after(0);
        assertEquals(1, batch.drops().size());
        assertEquals(1, batch.next());
        assertEquals(List.of(), ring.after(1).drops());
        assertEquals(1, ring.after(1).next());
        for (int i = 0; i < 6; i++) {
            ring.add(i, "expired", "b" + i, "t");
        }
        // Seven written, four held: a reader at 1 lost three, is told so by next, and reads the rest.
        RecentDrops.Batch late = ring.after(1);
        assertEquals(List.of(3L, 4L, 5L, 6L), late.drops().stream().map(RecentDrops.Drop::sequence).toList());
        assertEquals(7, late.next());
    }

    @Test
    void detailedDropsAreCountedAndKeptCountOnlyOnesOnlyCounted() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        MessageDrops drops = new MessageDrops(meters, new RecentDrops(10), () -> 42L);
        drops.count(MessageDrops.Reason.PACKET_TOO_LARGE, "client", "a/b");
        drops.count(MessageDrops.Reason.SESSION_ENDED, 5);
        assertEquals(1.0, meters.get("fleetmq.messages.dropped").tag("reason", "packet_too_large").counter().count());
        assertEquals(5.0, meters.get("fleetmq.messages.dropped").tag("reason", "session_ended").counter().count());
        assertEquals(List.of(new RecentDrops.Drop(0, 42, "packet_too_large", "client", "a/b")), drops.recent().all());
    }
}
