package io.fleetmq.bench.run;

import io.fleetmq.bench.probe.BrokerProbe;
import io.fleetmq.bench.probe.ResourceSample;
import io.fleetmq.bench.report.IntervalSample;
import io.fleetmq.bench.report.LatencySummary;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * The time series of a soak run ({@code --report-every}): from the start of the measured window, one
 * {@link IntervalSample} per interval, the last one ending with the window. Memory stays flat however
 * long the run: the interval histogram is recycled, and only one small record per interval is kept.
 * Driven by the run's coordinator thread, never by the event loops.
 */
final class SoakSeries {

    private final long everyNanos;
    private final RunStats stats;
    private final BrokerProbe probe;
    private final PrintStream progress;
    private final List<IntervalSample> samples = new ArrayList<>();
    private Phases phases;
    private boolean started;
    private boolean done;
    private long intervalStart;
    private RunStats.Counts last;
    private Histogram recycled;

    SoakSeries(Duration every, RunStats stats, BrokerProbe probe, PrintStream progress) {
        this.everyNanos = every.toNanos();
        this.stats = stats;
        this.probe = probe;
        this.progress = progress;
    }

    void begin(Phases phases) {
        this.phases = phases;
    }

    /** When the coordinator should look in next: the start of the window, then each interval's end. */
    long nextAt() {
        if (!started) {
            return phases.measureFrom();
        }
        if (done) {
            return phases.measureTo();
        }
        long end = intervalStart + everyNanos;
        return end - phases.measureTo() < 0 ? end : phases.measureTo();
    }

    /** Starts the series once the window opens, and closes each interval whose end has come. */
    void tick(long now) {
        if (done) {
            return;
        }
        if (!started) {
            if (now - phases.measureFrom() < 0) {
                return;
            }
            started = true;
            intervalStart = now;
            last = stats.counts();
            recycled = stats.takeInterval(recycled); // warm-up deliveries belong to no interval
            return;
        }
        long end = nextAt();
        if (now - end < 0) {
            return;
        }
        RunStats.Counts c = stats.counts();
        recycled = stats.takeInterval(recycled);
        LatencySummary latency = LatencySummary.of(recycled);
        ResourceSample broker = probe.active() ? probe.sample() : ResourceSample.NONE;
        // The interval's deliveries are counted by its own histogram, not by the delivery counter: the
        // two cannot be read at one instant while event loops record, and an interval's count and its
        // latency must describe the same deliveries.
        IntervalSample sample = new IntervalSample((now - phases.measureFrom()) / 1e9, (now - intervalStart) / 1e9,
                c.publishedTotal() - last.publishedTotal(), recycled.getTotalCount(), latency, broker);
        samples.add(sample);
        progress.printf(Locale.ROOT, "[interval %d, %.1f s] delivered %,.0f/s  p50 %.0f µs  p99 %.0f µs%s%n",
                samples.size(), sample.endSeconds(), sample.deliveredPerSecond(), latency.p50() / 1e3,
                latency.p99() / 1e3, broker(broker));
        last = c;
        intervalStart = now;
        done = phases.isOver(now);
    }

    private static String broker(ResourceSample b) {
        StringBuilder s = new StringBuilder();
        if (b.heapBytes() >= 0) {
            s.append(String.format(Locale.ROOT, "  broker heap %.1f MiB", b.heapBytes() / 1048576.0));
        }
        if (b.directBytes() >= 0) {
            s.append(String.format(Locale.ROOT, "  direct %.1f MiB", b.directBytes() / 1048576.0));
        }
        if (b.rssBytes() >= 0) {
            s.append(String.format(Locale.ROOT, "  RSS %.1f MiB", b.rssBytes() / 1048576.0));
        }
        return s.toString();
    }

    List<IntervalSample> samples() {
        return List.copyOf(samples);
    }
}
