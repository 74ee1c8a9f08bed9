package io.fleetmq.bench.run;

import java.time.Duration;

/**
 * The timeline of a run in {@link System#nanoTime()} terms: warm-up from {@code start}, then the
 * measured window {@code [measureFrom, measureTo)}. Publishing stops at {@code measureTo}.
 *
 * <p>A message belongs to the measurement when its send stamp falls in the window, wherever its
 * delivery lands. That makes the loss count exact at both edges: every measured publish is owed its
 * deliveries, and nothing sent in warm-up is counted against the window.
 */
public record Phases(long start, long measureFrom, long measureTo) {

    public static Phases startingAt(long startNanos, Duration warmup, Duration duration) {
        long from = startNanos + warmup.toNanos();
        return new Phases(startNanos, from, from + duration.toNanos());
    }

    /** Subtraction, not {@code <}, because {@code nanoTime()} may wrap [see its Javadoc]. */
    public boolean measures(long nanos) {
        return nanos - measureFrom >= 0 && nanos - measureTo < 0;
    }

    public boolean isOver(long nanos) {
        return nanos - measureTo >= 0;
    }

    public double measuredSeconds() {
        return (measureTo - measureFrom) / 1e9;
    }
}
