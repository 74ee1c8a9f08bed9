package io.fleetmq.bench.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.report.ErrorSummary;
import java.time.Duration;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** Which messages count: the send stamp decides membership in the measurement, the arrival time decides throughput. */
class RunStatsTest {

    private final RunStats stats = new RunStats();

    @Test
    void nothingIsMeasuredBeforeTheClockStarts() {
        stats.published(100);
        stats.delivered(100, 200);
        assertEquals(new RunStats.Counts(1, 0, 0, 1, 0, 0, 0), stats.counts());
        assertEquals(0, stats.takeEndToEnd().getTotalCount());
    }

    @Test
    void warmUpTrafficCountsInTotalsOnlyAndLateDeliveriesOfMeasuredMessagesStillCount() {
        stats.begin(Phases.startingAt(0, Duration.ofNanos(1_000), Duration.ofNanos(1_000)));
        stats.published(500);            // warm-up
        stats.delivered(500, 1_200);     // warm-up message arriving in the window: throughput, not latency
        stats.published(1_100);          // measured
        stats.delivered(1_100, 1_400);   // measured, arrives in the window
        stats.published(1_900);          // measured
        stats.delivered(1_900, 2_600);   // measured, arrives during the drain
        stats.acknowledged(1_100, 1_150);
        stats.acknowledged(500, 700);    // warm-up acknowledgement: counted, not recorded

        RunStats.Counts c = stats.counts();
        assertEquals(3, c.publishedTotal());
        assertEquals(2, c.publishedMeasured());
        assertEquals(3, c.deliveredTotal());
        assertEquals(2, c.deliveredMeasured());
        assertEquals(2, c.arrivalsInWindow());
        assertEquals(2, c.acknowledgedTotal());

        Histogram e2e = stats.takeEndToEnd();
        assertEquals(2, e2e.getTotalCount());
        assertEquals(300, e2e.getMinValue());
        assertEquals(700, e2e.getMaxValue());
        Histogram ack = stats.takeAcknowledgement();
        assertEquals(1, ack.getTotalCount());
        assertEquals(50, ack.getMaxValue());
    }

    @Test
    void errorsAreCountedByKindAndTheFirstOnesKeptWithTheirText() {
        for (int i = 0; i < Errors.SAMPLES + 5; i++) {
            stats.error(ErrorKind.DISCONNECTED, "client " + i);
        }
        stats.error(ErrorKind.CONNECT_FAILED, "refused");
        ErrorSummary summary = stats.errors().summary();
        assertEquals(Errors.SAMPLES + 5, summary.count(ErrorKind.DISCONNECTED));
        assertEquals(1, summary.count(ErrorKind.CONNECT_FAILED));
        assertEquals(0, summary.count(ErrorKind.IO_ERROR));
        assertEquals(Errors.SAMPLES + 6, summary.total());
        assertEquals(Errors.SAMPLES, summary.samples().size());
        assertEquals("disconnects: client 0", summary.samples().get(0));
    }
}
