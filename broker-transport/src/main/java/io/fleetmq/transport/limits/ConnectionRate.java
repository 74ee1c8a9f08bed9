package io.fleetmq.transport.limits;

/**
 * New connections per second of one listener, as a token bucket holding one second's worth: a
 * burst up to the rate is taken at once, beyond it one connection per 1/rate seconds.
 */
public final class ConnectionRate {

    private final double perSecond;
    private double tokens;
    private long last;

    public ConnectionRate(int perSecond) {
        this.perSecond = perSecond;
        this.tokens = perSecond;
        this.last = System.nanoTime();
    }

    /** Takes a token for one new connection; false when the listener is over its rate. */
    public synchronized boolean tryAcquire() {
        long now = System.nanoTime();
        tokens = Math.min(perSecond, tokens + (now - last) / 1e9 * perSecond);
        last = now;
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }

    /** How long until the next connection is within the rate, in nanoseconds (0 if it is now). */
    public synchronized long nanosUntilNext() {
        long now = System.nanoTime();
        double have = Math.min(perSecond, tokens + (now - last) / 1e9 * perSecond);
        return have >= 1 ? 0 : (long) Math.ceil((1 - have) / perSecond * 1e9);
    }
}
