package io.fleetmq.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition instead of sleeping a fixed time. This is the one place in the tests that polls.
 */
public final class Await {

    private static final long FIRST_PAUSE_MILLIS = 5;
    private static final long MAX_PAUSE_MILLIS = 100;

    private Await() {
    }

    /**
     * Returns as soon as {@code condition} holds; fails with {@code what} if it does not within {@code timeout}.
     * A condition that throws counts as "not yet" (the server may still be starting), and its last exception
     * becomes the cause of the failure. {@link AssertionError}s are not caught, so assertions may be used inside.
     *
     * @param what describes the awaited state for the failure message, e.g. "the consumer sees 3 records"
     */
    public static void until(Duration timeout, String what, BooleanSupplier condition) {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(condition, "condition");
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = FIRST_PAUSE_MILLIS;
        RuntimeException lastFailure = null;
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                lastFailure = e;
            }
            long remainingMillis = (deadline - System.nanoTime()) / 1_000_000;
            if (remainingMillis <= 0) {
                AssertionError failure = new AssertionError("timed out after " + timeout + " waiting until " + what);
                if (lastFailure != null) {
                    failure.initCause(lastFailure);
                }
                throw failure;
            }
            try {
                Thread.sleep(Math.min(pause, remainingMillis));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting until " + what, e);
            }
            // Quick conditions are seen within milliseconds; slow ones do not cost a busy loop.
            pause = Math.min(pause * 2, MAX_PAUSE_MILLIS);
        }
    }
}
