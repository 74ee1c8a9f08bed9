package io.fleetmq.core.limit;

/**
 * One client's publish rate, in messages and bytes per second, as two token buckets that each hold
 * one second of their rate: a client may burst up to that, and beyond it owes what it sent. The
 * caller stops reading from the client for {@link #take}'s answer, so a publisher above the rate is
 * slowed down by TCP rather than refused; a burst within the bucket costs it nothing.
 *
 * <p>Not thread-safe: one connection's reads are on one thread. Time is passed in (nanoseconds of
 * a monotonic clock), so the arithmetic is tested without waiting.
 */
public final class PublishRate {

    private final long messagesPerSecond;
    private final long bytesPerSecond;
    /** Tokens now, in units of one message (or byte) times 1e9, so refills need no fractions. */
    private long messageTokens;
    private long byteTokens;
    private long lastNanos;

    /**
     * @param messagesPerSecond messages per second; 0 means no limit
     * @param bytesPerSecond    bytes of PUBLISH packets per second; 0 means no limit
     * @param nowNanos          the clock now
     */
    public PublishRate(long messagesPerSecond, long bytesPerSecond, long nowNanos) {
        if (messagesPerSecond < 0 || bytesPerSecond < 0) {
            throw new IllegalArgumentException("rates must not be negative");
        }
        this.messagesPerSecond = messagesPerSecond;
        this.bytesPerSecond = bytesPerSecond;
        this.messageTokens = scaled(messagesPerSecond);
        this.byteTokens = scaled(bytesPerSecond);
        this.lastNanos = nowNanos;
    }

    /** Whether either rate is limited. */
    public boolean limited() {
        return messagesPerSecond > 0 || bytesPerSecond > 0;
    }

    /**
     * Counts one PUBLISH of {@code bytes} bytes.
     *
     * @return 0 if the client is within its rate; otherwise how many nanoseconds to stop reading from
     *         it until it is back within (its debt is paid by then)
     */
    public long take(long bytes, long nowNanos) {
        refill(nowNanos);
        long wait = 0;
        if (messagesPerSecond > 0) {
            messageTokens = saturatedSubtract(messageTokens, 1_000_000_000L);
            wait = Math.max(wait, owed(messageTokens, messagesPerSecond));
        }
        if (bytesPerSecond > 0) {
            byteTokens = saturatedSubtract(byteTokens, saturatedMultiply(bytes, 1_000_000_000L));
            wait = Math.max(wait, owed(byteTokens, bytesPerSecond));
        }
        return wait;
    }

    private void refill(long nowNanos) {
        long elapsed = Math.max(0, nowNanos - lastNanos);
        lastNanos = nowNanos;
        if (messagesPerSecond > 0) {
            messageTokens = Math.min(scaled(messagesPerSecond),
                    saturatedAdd(messageTokens, saturatedMultiply(elapsed, messagesPerSecond)));
        }
        if (bytesPerSecond > 0) {
            byteTokens = Math.min(scaled(bytesPerSecond),
                    saturatedAdd(byteTokens, saturatedMultiply(elapsed, bytesPerSecond)));
        }
    }

    /** Nanoseconds until {@code tokens} is back at 0 at {@code perSecond}. */
    private static long owed(long tokens, long perSecond) {
        return tokens >= 0 ? 0 : (-tokens + perSecond - 1) / perSecond;
    }

    private static long scaled(long perSecond) {
        return saturatedMultiply(perSecond, 1_000_000_000L);
    }

    private static long saturatedMultiply(long a, long b) {
        long r = a * b;
        return (a != 0 && (r / a != b || (a == -1 && b == Long.MIN_VALUE))) ? Long.MAX_VALUE : r;
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? (a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : r;
    }

    private static long saturatedSubtract(long a, long b) {
        long r = a - b;
        return ((a ^ b) & (a ^ r)) < 0 ? (a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : r;
    }
}
