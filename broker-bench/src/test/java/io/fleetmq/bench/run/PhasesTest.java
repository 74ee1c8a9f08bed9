package io.fleetmq.bench.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class PhasesTest {

    @Test
    void theWindowStartsAfterWarmUpAndExcludesItsEnd() {
        Phases p = Phases.startingAt(1_000, Duration.ofNanos(500), Duration.ofNanos(2_000));
        assertEquals(new Phases(1_000, 1_500, 3_500), p);
        assertFalse(p.measures(1_499), "warm-up");
        assertTrue(p.measures(1_500));
        assertTrue(p.measures(3_499));
        assertFalse(p.measures(3_500), "the end is outside");
        assertFalse(p.isOver(3_499));
        assertTrue(p.isOver(3_500));
        assertEquals(2e-6, p.measuredSeconds(), 1e-15);
    }

    @Test
    void comparisonsSurviveNanoTimeWrappingAround() {
        Phases p = Phases.startingAt(Long.MAX_VALUE - 10, Duration.ofNanos(5), Duration.ofNanos(20));
        assertTrue(p.measures(Long.MAX_VALUE), "before the wrap");
        assertTrue(p.measures(Long.MIN_VALUE + 5), "after the wrap");
        assertFalse(p.measures(Long.MAX_VALUE - 6), "still warm-up");
        // measureTo = MAX - 10 + 5 + 20, which wraps to MIN + 14.
        assertFalse(p.isOver(Long.MIN_VALUE + 13));
        assertTrue(p.isOver(Long.MIN_VALUE + 14));
    }

    @Test
    void zeroWarmUpMeasuresFromTheStart() {
        Phases p = Phases.startingAt(-50, Duration.ZERO, Duration.ofNanos(100));
        assertTrue(p.measures(-50));
        assertFalse(p.measures(-51));
    }
}
