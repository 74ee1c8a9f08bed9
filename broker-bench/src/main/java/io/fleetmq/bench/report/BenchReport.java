package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import java.util.List;
import java.util.Locale;

/**
 * The result of one run. Counts refer to messages whose send stamp lies in the measured window;
 * {@code arrivalsInWindow} counts deliveries that arrived in it, whenever they were sent.
 *
 * @param transport          the client's Netty transport, {@code epoll} or {@code nio}
 * @param note               why the run was aborted; empty when it completed
 * @param measuredSeconds    length of the measured window
 * @param drainSeconds       time spent waiting for stragglers after the last publish
 * @param published          publishes sent in the window
 * @param expectedDeliveries {@code published} times the fan factor
 * @param delivered          deliveries of those publishes, drain included
 * @param arrivalsInWindow   deliveries that arrived during the window: the subscribers' real throughput
 * @param reordered          deliveries whose sequence number did not rise: duplicates or reordering
 * @param unacknowledged     QoS 1/2 publishes (of the whole run) still without an acknowledgement at the end
 * @param acknowledgement    PUBACK (QoS 1) or PUBCOMP (QoS 2) latency; empty for QoS 0
 * @param series             one sample per {@code --report-every} interval of the measured window; empty without
 */
public record BenchReport(
        BenchOptions options,
        String runId,
        String transport,
        Status status,
        String note,
        int publishers,
        int subscribers,
        int deliveriesPerPublish,
        double measuredSeconds,
        double drainSeconds,
        long published,
        long expectedDeliveries,
        long delivered,
        long arrivalsInWindow,
        long reordered,
        long unacknowledged,
        LatencySummary endToEnd,
        LatencySummary acknowledgement,
        ErrorSummary errors,
        List<IntervalSample> series) {

    public BenchReport {
        series = List.copyOf(series);
    }

    /** Without a time series. */
    public BenchReport(BenchOptions options, String runId, String transport, Status status, String note, int publishers,
                       int subscribers, int deliveriesPerPublish, double measuredSeconds, double drainSeconds,
                       long published, long expectedDeliveries, long delivered, long arrivalsInWindow, long reordered,
                       long unacknowledged, LatencySummary endToEnd, LatencySummary acknowledgement,
                       ErrorSummary errors) {
        this(options, runId, transport, status, note, publishers, subscribers, deliveriesPerPublish, measuredSeconds,
                drainSeconds, published, expectedDeliveries, delivered, arrivalsInWindow, reordered, unacknowledged,
                endToEnd, acknowledgement, errors, List.of());
    }

    public enum Status {
        COMPLETED, ABORTED;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Deliveries owed but not made after the drain; negative means more deliveries than owed. */
    public long lost() {
        return expectedDeliveries - delivered;
    }

    public double publishedPerSecond() {
        return measuredSeconds > 0 ? published / measuredSeconds : 0;
    }

    public double deliveredPerSecond() {
        return measuredSeconds > 0 ? arrivalsInWindow / measuredSeconds : 0;
    }

    /** Completed, and nothing counted as an error. Losses are a measurement, not an error. */
    public boolean clean() {
        return status == Status.COMPLETED && errors.total() == 0;
    }
}
