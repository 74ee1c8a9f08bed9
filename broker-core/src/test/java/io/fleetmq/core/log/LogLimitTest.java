package io.fleetmq.core.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogLimitTest {

    @Test
    void letsTheAllowanceThroughPerIntervalAndCountsTheRest() {
        AtomicLong now = new AtomicLong();
        LogLimit limit = new LogLimit(3, Duration.ofSeconds(10), now::get);
        int allowed = 0;
        for (int i = 0; i < 100; i++) {
            allowed += limit.allow() ? 1 : 0;
        }
        assertEquals(3, allowed);

        now.addAndGet(Duration.ofSeconds(10).toNanos());
        assertTrue(limit.allow());
        assertEquals(" (97 similar lines suppressed)", limit.suppressedNote());
        assertEquals("", limit.suppressedNote());
        assertTrue(limit.allow());
        assertTrue(limit.allow());
        assertFalse(limit.allow());
    }
}
