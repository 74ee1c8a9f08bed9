package io.fleetmq.bench.run;

import io.fleetmq.bench.report.ErrorKind;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Counters and latency recorders shared by every client of a run. Written concurrently from all
 * event loops (LongAdder and HdrHistogram's wait-free {@link Recorder}), read by the coordinator.
 *
 * <p>"Measured" counters only count messages whose send stamp lies in the measured window (see
 * {@link Phases}); the totals count everything, warm-up included, and drive drain and progress.
 */
public final class RunStats {

    private volatile Phases phases;

    private final LongAdder publishedTotal = new LongAdder();
    private final LongAdder publishedMeasured = new LongAdder();
    private final LongAdder acknowledgedTotal = new LongAdder();
    private final LongAdder deliveredTotal = new LongAdder();
    private final LongAdder deliveredMeasured = new LongAdder();
    private final LongAdder arrivalsInWindow = new LongAdder();
    private final LongAdder reordered = new LongAdder();
    private final Recorder endToEnd = new Recorder(3);
    private final Recorder acknowledgement = new Recorder(3);
    /** Every delivery by arrival, emptied at each interval of a soak series; null without one. */
    private final Recorder intervalEndToEnd;
    private final Errors errors = new Errors();

    public RunStats() {
        this(false);
    }

    /** @param intervals also keep per-interval latency for a time series ({@code --report-every}) */
    public RunStats(boolean intervals) {
        this.intervalEndToEnd = intervals ? new Recorder(3) : null;
    }

    /** Starts the clock; nothing is measured before this. */
    public void begin(Phases phases) {
        this.phases = phases;
    }

    public Phases phases() {
        return phases;
    }

    private boolean measures(long nanos) {
        Phases p = phases;
        return p != null && p.measures(nanos);
    }

    public void published(long sentNanos) {
        publishedTotal.increment();
        if (measures(sentNanos)) {
            publishedMeasured.increment();
        }
    }

    /** A PUBACK (QoS 1) or PUBCOMP (QoS 2) for a publish stamped {@code sentNanos}. */
    public void acknowledged(long sentNanos, long nowNanos) {
        acknowledgedTotal.increment();
        if (measures(sentNanos)) {
            acknowledgement.recordValue(Math.max(0, nowNanos - sentNanos));
        }
    }

    public void delivered(long sentNanos, long nowNanos) {
        deliveredTotal.increment();
        if (intervalEndToEnd != null) {
            intervalEndToEnd.recordValue(Math.max(0, nowNanos - sentNanos));
        }
        if (measures(nowNanos)) {
            arrivalsInWindow.increment();
        }
        if (measures(sentNanos)) {
            deliveredMeasured.increment();
            endToEnd.recordValue(Math.max(0, nowNanos - sentNanos));
        }
    }

    /** A delivery whose sequence number is not above the last one from the same publisher. */
    public void reordered() {
        reordered.increment();
    }

    public void error(ErrorKind kind, String message) {
        errors.record(kind, message);
    }

    public Errors errors() {
        return errors;
    }

    public Counts counts() {
        return new Counts(publishedTotal.sum(), publishedMeasured.sum(), acknowledgedTotal.sum(),
                deliveredTotal.sum(), deliveredMeasured.sum(), arrivalsInWindow.sum(), reordered.sum());
    }

    /** Everything recorded since the last call; call once, after all traffic has stopped. */
    public Histogram takeEndToEnd() {
        return endToEnd.getIntervalHistogram();
    }

    public Histogram takeAcknowledgement() {
        return acknowledgement.getIntervalHistogram();
    }

    /**
     * Deliveries recorded since the previous call, by arrival; reuses {@code recycle} (the histogram the
     * previous call returned, or null), so that a series of any length keeps two histograms, not one per
     * interval. Only with intervals enabled.
     */
    public Histogram takeInterval(Histogram recycle) {
        return intervalEndToEnd.getIntervalHistogram(recycle);
    }

    /** A point-in-time copy of the counters. */
    public record Counts(long publishedTotal, long publishedMeasured, long acknowledgedTotal, long deliveredTotal,
                         long deliveredMeasured, long arrivalsInWindow, long reordered) {
    }
}
