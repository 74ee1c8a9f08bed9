package io.fleetmq.bench.report;

import org.HdrHistogram.AbstractHistogram;

/**
 * Percentiles of one latency distribution, in nanoseconds. HdrHistogram keeps three significant
 * digits, so each value is exact to within 0.1 %.
 */
public record LatencySummary(long count, long p50, long p90, long p99, long p999, long max, double mean) {

    public static final LatencySummary EMPTY = new LatencySummary(0, 0, 0, 0, 0, 0, 0);

    public static LatencySummary of(AbstractHistogram histogram) {
        if (histogram.getTotalCount() == 0) {
            return EMPTY;
        }
        return new LatencySummary(histogram.getTotalCount(),
                histogram.getValueAtPercentile(50),
                histogram.getValueAtPercentile(90),
                histogram.getValueAtPercentile(99),
                histogram.getValueAtPercentile(99.9),
                histogram.getMaxValue(),
                histogram.getMean());
    }
}
