package io.fleetmq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LatencySummaryTest {

    /** HdrHistogram with 3 significant digits: every reported value within 0.1 % of the exact one. */
    private static void assertWithinPrecision(long expected, long actual) {
        assertEquals(expected, actual, expected * 0.001, "expected about " + expected + ", was " + actual);
    }

    @Test
    void percentilesOfAUniformDistributionAreWhereTheyShouldBe() {
        Histogram h = new Histogram(3);
        for (long micros = 1; micros <= 10_000; micros++) {
            h.recordValue(micros * 1_000);
        }
        LatencySummary s = LatencySummary.of(h);
        assertEquals(10_000, s.count());
        assertWithinPrecision(5_000_000, s.p50());
        assertWithinPrecision(9_000_000, s.p90());
        assertWithinPrecision(9_900_000, s.p99());
        assertWithinPrecision(9_990_000, s.p999());
        assertWithinPrecision(10_000_000, s.max());
        assertEquals(5_000_500, s.mean(), 5_000_500 * 0.001);
    }

    @Test
    void aSingleOutlierShowsAtTheTailOnly() {
        Histogram h = new Histogram(3);
        h.recordValueWithCount(100_000, 999);
        h.recordValue(50_000_000);
        LatencySummary s = LatencySummary.of(h);
        assertWithinPrecision(100_000, s.p50());
        assertWithinPrecision(100_000, s.p99());
        assertWithinPrecision(100_000, s.p999());
        assertWithinPrecision(50_000_000, s.max());
    }

    @Test
    void noSamplesGiveTheEmptySummary() {
        assertEquals(LatencySummary.EMPTY, LatencySummary.of(new Histogram(3)));
    }
}
