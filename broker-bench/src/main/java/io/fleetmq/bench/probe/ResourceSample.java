package io.fleetmq.bench.probe;

/**
 * The broker's memory at one moment, in bytes; {@link #UNKNOWN} where its source was not given or
 * could not be read.
 *
 * @param heapBytes   JVM heap in use, all pools together, from the metrics endpoint
 * @param directBytes direct (off-heap) buffers in use, from the metrics endpoint
 * @param rssBytes    resident set size of the process, from {@code /proc/PID/status}
 */
public record ResourceSample(long heapBytes, long directBytes, long rssBytes) {

    public static final long UNKNOWN = -1;
    public static final ResourceSample NONE = new ResourceSample(UNKNOWN, UNKNOWN, UNKNOWN);

    /**
     * What each of {@code count} things cost between two samples: {@code (after - before) / count},
     * or {@link Double#NaN} when either sample lacks the value or there is nothing to divide by.
     */
    public static double perEach(long before, long after, long count) {
        if (before == UNKNOWN || after == UNKNOWN || count <= 0) {
            return Double.NaN;
        }
        return (double) (after - before) / count;
    }
}
