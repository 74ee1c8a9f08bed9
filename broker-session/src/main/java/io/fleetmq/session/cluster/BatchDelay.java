package io.fleetmq.session.cluster;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * How long after their receipt the messages of a consumer's batch were done with: the batch's
 * oldest message, one timer sample per batch, so a message costs one comparison. Used on one
 * consumer thread only. A batch read again after a failure keeps its oldest receipt until a batch
 * is done, so a failure never shows as a short delay.
 */
public final class BatchDelay {

    private static final long NONE = Long.MAX_VALUE;

    private final Timer timer;
    /** Receipt (wall clock) of the oldest message of the batch under way, or {@link #NONE}. */
    private long oldest = NONE;

    public BatchDelay(MeterRegistry meters, String name, String description) {
        this.timer = Timer.builder(name).description(description).register(meters);
    }

    /** A message received at {@code createdAtMillis} (the receiving node's wall clock) is in the batch. */
    public void saw(long createdAtMillis) {
        if (createdAtMillis < oldest) {
            oldest = createdAtMillis;
        }
    }

    /** The batch is done: records its oldest message's delay, if it had messages, and starts the next. */
    public void done() {
        if (oldest != NONE) {
            // The receipt is the receiving node's clock: another node's that runs ahead reads as 0.
            timer.record(Math.max(0, System.currentTimeMillis() - oldest), TimeUnit.MILLISECONDS);
            oldest = NONE;
        }
    }
}
