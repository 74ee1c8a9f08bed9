package io.fleetmq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Nearest rank over the dropped devices; those not back count as never. */
class RecoveryTest {

    @Test
    void percentilesAreTheTimeByWhichThatShareOfTheDroppedWasBack() {
        long[] back = new long[100];
        for (int i = 0; i < 100; i++) {
            back[i] = (100 - i) * 1_000_000L; // any order
        }
        assertEquals(new Recovery(50_000_000, 90_000_000, 99_000_000, 100_000_000), Recovery.of(back, 100));
    }

    @Test
    void devicesThatNeverCameBackLeaveTheUpperPercentilesUnreached() {
        long[] back = {5, 1, 3};
        assertEquals(new Recovery(3, Recovery.NOT_REACHED, Recovery.NOT_REACHED, Recovery.NOT_REACHED),
                Recovery.of(back, 4));
        assertEquals(new Recovery(3, 5, 5, 5), Recovery.of(back, 3));
        assertEquals(new Recovery(7, 7, 7, 7), Recovery.of(new long[] {7}, 1));
        assertEquals(Recovery.NONE, Recovery.of(new long[0], 0));
        assertEquals(Recovery.NONE, Recovery.of(new long[0], 5));
    }
}
