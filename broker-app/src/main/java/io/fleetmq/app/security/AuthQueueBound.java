package io.fleetmq.app.security;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Bounds the auth queue by the wait it means, not only by its length: a CONNECT is refused (0x89)
 * when the CONNECTs queued before it would hold the auth threads longer than {@code auth.max-wait}.
 * What a CONNECT holds a thread for is what the checks that ended in the last half second to second
 * took on average: a password check of Mosquitto's PBKDF2 at 101 iterations, a credential read
 * shared by hundreds (its one long read and the many short checks after it averaged together), or a
 * bcrypt hash of a tenth of a second. So a reconnect storm of cheap checks queues tens of thousands
 * that are served within seconds, while a storm of wrong passwords against slow hashes queues only
 * what the threads get through within the bound: {@code auth.max-pending} alone cannot tell them apart.
 *
 * <p>Until a first check has ended the cost is unknown and only {@code auth.max-pending} bounds the
 * queue; what waits there for a client that gave up meanwhile is dropped unchecked (ConnectWaits
 * cancels it), so such a start costs no more than the threads' work until the first checks end.
 * While no check ends, the last average stands.
 */
final class AuthQueueBound {

    /** Checks are averaged over this bucket and the one before it. */
    static final long BUCKET_NANOS = Duration.ofMillis(500).toNanos();

    private final long maxWaitNanos;
    private final int threads;
    private final LongSupplier clock;
    // Guarded by this.
    private long bucketStart;
    private long sum;
    private long count;
    private long previousSum;
    private long previousCount;
    /** Average nanoseconds a CONNECT held an auth thread lately; 0 until one did. */
    private double average;

    /** @param maxWait longest expected wait admitted; zero: no bound but the queue's length */
    AuthQueueBound(Duration maxWait, int threads) {
        this(maxWait, threads, System::nanoTime);
    }

    AuthQueueBound(Duration maxWait, int threads, LongSupplier nanoClock) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1");
        }
        this.maxWaitNanos = maxWait.toNanos();
        this.threads = threads;
        this.clock = nanoClock;
        this.bucketStart = nanoClock.getAsLong();
    }

    /** A CONNECT held an auth thread for {@code nanos}. */
    synchronized void took(long nanos) {
        long now = clock.getAsLong();
        long age = now - bucketStart;
        if (age >= BUCKET_NANOS) {
            boolean adjacent = age < 2 * BUCKET_NANOS;
            previousSum = adjacent ? sum : 0;
            previousCount = adjacent ? count : 0;
            sum = 0;
            count = 0;
            bucketStart = now;
        }
        sum += nanos;
        count++;
        average = (double) (sum + previousSum) / (count + previousCount);
    }

    /** How long a CONNECT queued behind {@code queued} others would wait for an auth thread to finish it. */
    synchronized long expectedWaitNanos(int queued) {
        return (long) ((queued + 1) * average / threads);
    }

    /** Whether a CONNECT may join {@code queued} others. */
    boolean admits(int queued) {
        return maxWaitNanos <= 0 || expectedWaitNanos(queued) <= maxWaitNanos;
    }
}
