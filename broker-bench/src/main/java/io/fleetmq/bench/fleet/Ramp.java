package io.fleetmq.bench.fleet;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Brings a fleet up: starts one device after another, no faster than {@code --connect-rate} and with
 * at most {@code --connect-concurrency} handshakes open, then waits until every handshake has ended
 * (each ends on its own: TCP connect, CONNACK and SUBACK all have time-outs). Prints one progress line
 * per second.
 */
final class Ramp {

    private static final long PROGRESS_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final long ratePerSecond;
    private final int concurrency;
    private final Semaphore permits;
    private final PrintStream progress;
    private long start;
    private long end;
    private long lastAt;
    private long lastAccepted;
    private long started;

    Ramp(long ratePerSecond, int concurrency, PrintStream progress) {
        this.ratePerSecond = ratePerSecond;
        this.concurrency = concurrency;
        this.permits = new Semaphore(concurrency);
        this.progress = progress;
    }

    /** Releases the permit of {@code device}'s ramp attempt, if it holds one; call when an attempt ends. */
    void handshakeOver(FleetClient device) {
        if (device.rampPermit) {
            device.rampPermit = false;
            permits.release();
        }
    }

    /** Starts every device and returns once all their first handshakes have ended. */
    void run(FleetClient[] devices, FleetStats stats) {
        start = System.nanoTime();
        lastAt = start;
        for (int i = 0; i < devices.length; i++) {
            acquire(stats);
            if (ratePerSecond > 0) {
                long due = start + (long) (i * 1e9 / ratePerSecond);
                for (long now = System.nanoTime(); due - now > 0; now = System.nanoTime()) {
                    LockSupport.parkNanos(Math.min(due - now, POLL_NANOS));
                    report(stats, false);
                }
            }
            devices[i].rampPermit = true;
            if (!devices[i].connect()) {
                handshakeOver(devices[i]);
            }
            started++;
            report(stats, false);
        }
        // All permits back means no handshake is open any more.
        while (true) {
            try {
                if (permits.tryAcquire(concurrency, POLL_NANOS, TimeUnit.NANOSECONDS)) {
                    permits.release(concurrency);
                    break;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            report(stats, false);
        }
        end = System.nanoTime();
        report(stats, true);
    }

    private void acquire(FleetStats stats) {
        try {
            while (!permits.tryAcquire(POLL_NANOS, TimeUnit.NANOSECONDS)) {
                report(stats, false);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while ramping up", e);
        }
    }

    private void report(FleetStats stats, boolean last) {
        long now = System.nanoTime();
        if (!last && now - lastAt < PROGRESS_EVERY_NANOS) {
            return;
        }
        long accepted = stats.accepted.sum();
        double seconds = (now - lastAt) / 1e9;
        progress.printf(Locale.ROOT, "[%5.1f s] ramp: started %,d  CONNACK 0 %,d  served %,d  failed %,d  open %,d"
                        + "  (%,.0f connects/s)%n",
                (now - start) / 1e9, started, accepted, stats.served.sum(), stats.failures(),
                concurrency - permits.availablePermits(), seconds > 0 ? (accepted - lastAccepted) / seconds : 0);
        lastAccepted = accepted;
        lastAt = now;
    }

    /** From the first connect to the end of the last handshake. */
    double seconds() {
        return (end - start) / 1e9;
    }
}
