package io.fleetmq.bench.report;

import java.util.Arrays;

/**
 * How fast the dropped devices of a storm were served again, counted from the first drop: the time
 * by which 50, 90, 99 and 100 % of them were back. {@link #NOT_REACHED} where that share never came
 * back within the storm timeout.
 */
public record Recovery(long p50, long p90, long p99, long p100) {

    public static final long NOT_REACHED = -1;
    public static final Recovery NONE = new Recovery(NOT_REACHED, NOT_REACHED, NOT_REACHED, NOT_REACHED);

    /**
     * @param backNanos each returned device's time from the first drop to being served again
     * @param dropped   how many devices dropped: the 100 % (those not back count as never)
     */
    public static Recovery of(long[] backNanos, long dropped) {
        if (dropped <= 0) {
            return NONE;
        }
        long[] sorted = backNanos.clone();
        Arrays.sort(sorted);
        return new Recovery(at(sorted, dropped, 50), at(sorted, dropped, 90), at(sorted, dropped, 99),
                at(sorted, dropped, 100));
    }

    /** The time the {@code ceil(percent % of dropped)}-th device came back: nearest rank, no interpolation. */
    private static long at(long[] sorted, long dropped, int percent) {
        long rank = Math.max(1, (dropped * percent + 99) / 100);
        return rank <= sorted.length ? sorted[(int) rank - 1] : NOT_REACHED;
    }
}
