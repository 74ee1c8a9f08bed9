package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class BoundedStopTest {

    @Test
    void aStopThatFinishesInTimeIsWaitedFor() {
        AtomicBoolean closed = new AtomicBoolean();
        assertTrue(BoundedStop.stop(() -> closed.set(true), Duration.ofSeconds(10)));
        assertTrue(closed.get());
    }

    @Test
    void aFailingStopIsOverToo() {
        assertTrue(BoundedStop.stop(() -> {
            throw new IllegalStateException("Kafka away");
        }, Duration.ofSeconds(10)));
    }

    @Test
    void aStopThatHangsIsAbandonedAfterTheTimeout() {
        CountDownLatch never = new CountDownLatch(1);
        try {
            assertFalse(BoundedStop.stop(never::await, Duration.ofMillis(200)));
        } finally {
            never.countDown(); // lets the abandoned stop thread end
        }
    }
}
