package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The auth queue's bound by expected wait: arithmetic over the checks of the last second, on a clock of the test's. */
class AuthQueueBoundTest {

    private static final long MS = 1_000_000L;
    private final AtomicLong now = new AtomicLong(1_000 * MS);

    private AuthQueueBound bound(Duration maxWait, int threads) {
        return new AuthQueueBound(maxWait, threads, now::get);
    }

    @Test
    void beforeAnyCheckEndedTheCostIsUnknownAndOnlyTheQueuesLengthBoundsIt() {
        AuthQueueBound bound = bound(Duration.ofSeconds(5), 2);
        assertTrue(bound.admits(19_999));
        assertEquals(0, bound.expectedWaitNanos(19_999));
    }

    @Test
    void slowChecksAdmitWhatTheThreadsGetThroughWithinTheWait() {
        AuthQueueBound bound = bound(Duration.ofSeconds(5), 2);
        bound.took(100 * MS); // a bcrypt hash of a tenth of a second
        assertEquals(5_000 * MS, bound.expectedWaitNanos(99), "100 checks of 0.1 s on 2 threads");
        assertTrue(bound.admits(99));
        assertFalse(bound.admits(100));
    }

    @Test
    void aSharedCredentialReadIsAveragedWithTheCheapChecksAfterIt() {
        AuthQueueBound bound = bound(Duration.ofSeconds(5), 2);
        bound.took(200 * MS); // the one read of 500 user names' credentials
        for (int i = 0; i < 499; i++) {
            now.addAndGet(MS / 2);
            bound.took(MS / 5); // each of the 500 then checks its own cheap hash
        }
        assertTrue(bound.admits(5_000), "5,000 queued wait about 1.5 s: " + bound.expectedWaitNanos(5_000) / MS + " ms");
        assertFalse(bound.admits(20_000));
    }

    @Test
    void theBoundFollowsWhatChecksCostNowNotAMinuteAgo() {
        AuthQueueBound bound = bound(Duration.ofSeconds(1), 1);
        for (int i = 0; i < 1_000; i++) {
            bound.took(MS / 5);
        }
        assertTrue(bound.admits(1_000));
        now.addAndGet(60_000 * MS);
        bound.took(400 * MS); // a storm of wrong passwords against bcrypt at cost 12
        assertFalse(bound.admits(2), "three behind checks of 0.4 s");
        assertTrue(bound.admits(1));
    }

    @Test
    void whileNoCheckEndsTheLastAverageStands() {
        AuthQueueBound bound = bound(Duration.ofSeconds(1), 1);
        bound.took(300 * MS);
        now.addAndGet(10_000 * MS);
        assertEquals(600 * MS, bound.expectedWaitNanos(1));
        assertFalse(bound.admits(3));
    }

    @Test
    void aZeroWaitLeavesOnlyTheQueuesLength() {
        AuthQueueBound bound = bound(Duration.ZERO, 2);
        bound.took(10_000 * MS);
        assertTrue(bound.admits(1_000_000));
    }

    @Test
    void threadsMustBeCounted() {
        assertThrows(IllegalArgumentException.class, () -> new AuthQueueBound(Duration.ofSeconds(1), 0));
    }
}
