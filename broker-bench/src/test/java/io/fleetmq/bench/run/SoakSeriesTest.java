package io.fleetmq.bench.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.bench.cli.ProbeOptions;
import io.fleetmq.bench.probe.BrokerProbe;
import io.fleetmq.bench.probe.ResourceSample;
import io.fleetmq.bench.report.IntervalSample;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Intervals start with the measured window, end at each boundary and at the window's end, and count only their own. */
class SoakSeriesTest {

    private final ByteArrayOutputStream progress = new ByteArrayOutputStream();
    private final RunStats stats = new RunStats(true);

    private SoakSeries series(long everyNanos) {
        PrintStream out = new PrintStream(progress, true, StandardCharsets.UTF_8);
        return new SoakSeries(Duration.ofNanos(everyNanos), stats, new BrokerProbe(ProbeOptions.NONE, out), out);
    }

    @Test
    void eachIntervalHasItsOwnRatesAndLatencyAndTheLastEndsWithTheWindow() {
        Phases phases = new Phases(0, 1_000, 4_000);
        stats.begin(phases);
        SoakSeries series = series(1_500);
        series.begin(phases);

        stats.published(100);
        stats.delivered(100, 500);           // warm-up: in no interval
        series.tick(500);
        assertEquals(1_000, series.nextAt(), "the series waits for the window");
        series.tick(1_000);
        assertEquals(2_500, series.nextAt());

        stats.published(1_100);
        stats.delivered(900, 1_200);         // latency 300
        stats.delivered(1_000, 1_500);       // latency 500
        series.tick(2_000);                  // not due yet
        series.tick(2_600);                  // a little late: the interval ends when it is cut
        assertEquals(4_000, series.nextAt(), "the last interval ends with the window, not a full interval later");

        stats.delivered(3_000, 3_100);       // latency 100
        series.tick(4_000);
        series.tick(5_000);                  // over: nothing more

        List<IntervalSample> samples = series.samples();
        assertEquals(2, samples.size(), samples.toString());
        IntervalSample first = samples.get(0);
        assertEquals(1, first.published());
        assertEquals(2, first.delivered());
        assertEquals(2, first.latency().count());
        assertEquals(300, first.latency().p50());
        assertEquals(500, first.latency().max());
        assertEquals(1.6e-6, first.endSeconds(), 1e-12);
        assertEquals(1.6e-6, first.seconds(), 1e-12);
        assertEquals(ResourceSample.NONE, first.broker());
        IntervalSample last = samples.get(1);
        assertEquals(0, last.published());
        assertEquals(1, last.delivered());
        assertEquals(100, last.latency().max());
        assertEquals(1.4e-6, last.seconds(), 1e-12);
        assertTrue(progress.toString(StandardCharsets.UTF_8).contains("[interval 2, 0.0 s] delivered "));
    }

    @Test
    void aLongSeriesKeepsOneSmallRecordPerInterval() {
        long every = 1_000;
        Phases phases = new Phases(0, 0, every * 10_000);
        stats.begin(phases);
        SoakSeries series = series(every);
        series.begin(phases);
        series.tick(0);
        for (long t = 1; t <= 10_000; t++) {
            stats.delivered(t * every - 10, t * every - 5);
            series.tick(t * every);
        }
        List<IntervalSample> samples = series.samples();
        assertEquals(10_000, samples.size());
        assertTrue(samples.stream().allMatch(s -> s.delivered() == 1 && s.latency().count() == 1));
    }
}
