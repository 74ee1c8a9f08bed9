package io.fleetmq.session.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class DeliveryGateTest {

    @Test
    void aMessageRoutedAgainAfterAFailoverPassesOnce() {
        DeliveryGate gate = new DeliveryGate();
        // The dead owner handed over offsets 10..14, then the next owner routes 12..16 again.
        List<Long> passed = new ArrayList<>();
        for (long o = 10; o <= 14; o++) {
            if (gate.admit(0, o)) {
                passed.add(o);
            }
        }
        for (long o = 12; o <= 16; o++) {
            if (gate.admit(0, o)) {
                passed.add(o);
            }
        }
        assertEquals(List.of(10L, 11L, 12L, 13L, 14L, 15L, 16L), passed);
    }

    @Test
    void partitionsAreIndependent() {
        DeliveryGate gate = new DeliveryGate();
        assertTrue(gate.admit(0, 100));
        assertTrue(gate.admit(1, 5));
        assertFalse(gate.admit(0, 100));
        assertTrue(gate.admit(1, 6));
    }

    @Test
    void twoThreadsOfferingTheSameOffsetsLetEachThroughOnce() throws Exception {
        DeliveryGate gate = new DeliveryGate();
        ConcurrentLinkedQueue<Long> passed = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        Runnable offer = () -> {
            try {
                start.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (long o = 0; o < 100_000; o++) {
                if (gate.admit(3, o)) {
                    passed.add(o);
                }
            }
        };
        Thread a = new Thread(offer);
        Thread b = new Thread(offer);
        a.start();
        b.start();
        start.countDown();
        a.join();
        b.join();
        assertEquals(passed.size(), passed.stream().distinct().count(), "no offset passed twice");
        // Each thread offers an offset before the next, so none is skipped either.
        assertEquals(100_000, passed.size(), "every offset passed");
    }

    @Test
    void everyPartOfASplitMessagePassesOnceAndRepeatsOfAnyPartDoNot() {
        DeliveryGate gate = new DeliveryGate();
        assertTrue(gate.admit(2, 40, 0));
        assertTrue(gate.admit(2, 40, 1));
        assertTrue(gate.admit(2, 40, 2));
        // The batch is routed again: the same parts come again, then the next message.
        assertFalse(gate.admit(2, 40, 0));
        assertFalse(gate.admit(2, 40, 1));
        assertFalse(gate.admit(2, 40, 2));
        assertFalse(gate.admit(2, 39));
        assertTrue(gate.admit(2, 41));
        assertFalse(gate.admit(2, 40, 3), "a part of an earlier message after a later one is a repeat");
    }
}
