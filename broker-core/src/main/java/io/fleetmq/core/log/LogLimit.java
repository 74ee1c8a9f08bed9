package io.fleetmq.core.log;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Lets at most {@code perInterval} log lines through per interval and counts the rest, so that a
 * client misbehaving thousands of times a second (bad passwords, malformed packets) costs a handful
 * of lines, not a full disk. One instance guards one kind of line; it is shared by all connections,
 * which is what bounds the total. The first line after a quiet spell says how many were dropped.
 */
public final class LogLimit {

    private final int perInterval;
    private final long intervalNanos;
    private final LongSupplier nanoClock;
    private long windowStart;
    private int inWindow;
    private final AtomicLong suppressed = new AtomicLong();

    public LogLimit(int perInterval, java.time.Duration interval) {
        this(perInterval, interval, System::nanoTime);
    }

    LogLimit(int perInterval, java.time.Duration interval, LongSupplier nanoClock) {
        if (perInterval < 1) {
            throw new IllegalArgumentException("perInterval must be at least 1");
        }
        this.perInterval = perInterval;
        this.intervalNanos = interval.toNanos();
        this.nanoClock = nanoClock;
        this.windowStart = nanoClock.getAsLong();
    }

    /**
     * Whether one more line may be logged now. When it may, {@link #takeSuppressed()} tells how many
     * were held back before it.
     */
    public synchronized boolean allow() {
        long now = nanoClock.getAsLong();
        if (now - windowStart >= intervalNanos) {
            windowStart = now;
            inWindow = 0;
        }
        if (inWindow < perInterval) {
            inWindow++;
            return true;
        }
        suppressed.incrementAndGet();
        return false;
    }

    /** Lines held back since the last call; resets the count. */
    public long takeSuppressed() {
        return suppressed.getAndSet(0);
    }

    /** " (N similar lines suppressed)" when lines were held back, else "": to append to an allowed line. */
    public String suppressedNote() {
        long n = takeSuppressed();
        return n == 0 ? "" : " (" + n + " similar lines suppressed)";
    }
}
