package io.fleetmq.kafka.supervise;

import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the node's background loops (consumers of Kafka, backlog readers, timer tasks) alive. A
 * loop that throws unexpectedly is logged once, counted in {@code fleetmq_loop_restarts_total{loop}}
 * and run again after a backoff that doubles from {@link Policy#firstBackoff} up to
 * {@link Policy#maxBackoff}; the loop itself re-creates its Kafka consumer and resumes from its
 * position. A loop that keeps failing without progress for longer than {@link Policy#giveUpAfter},
 * or fails in a way retrying cannot mend (an {@link Error}, Kafka refusing our credentials or
 * rights), gives up: the supervisor turns unhealthy (the node is then not ready) and tells its
 * give-up listeners, so the node can fence itself rather than serve with a part of it dead.
 *
 * <p>Without this, a loop's thread that died would leave the node up and ready while it no longer
 * routes, follows the shared state or receives from other nodes; and a task on a
 * {@link java.util.concurrent.ScheduledThreadPoolExecutor} that throws is cancelled by the JDK
 * without a word.
 */
public final class LoopSupervisor implements HealthCheck {

    private static final Logger log = LoggerFactory.getLogger(LoopSupervisor.class);
    static final String RESTARTS_METER = "fleetmq.loop.restarts";
    static final String GAVE_UP_METER = "fleetmq.loop.gave.up";

    /** How loops are restarted and when they give up. */
    public record Policy(Duration firstBackoff, Duration maxBackoff, Duration giveUpAfter) {

        public Policy {
            Objects.requireNonNull(firstBackoff, "firstBackoff");
            Objects.requireNonNull(maxBackoff, "maxBackoff");
            Objects.requireNonNull(giveUpAfter, "giveUpAfter");
            if (firstBackoff.isNegative() || firstBackoff.isZero() || maxBackoff.compareTo(firstBackoff) < 0) {
                throw new IllegalArgumentException("backoff must be positive and at most its maximum");
            }
        }

        /** 100 ms doubling to 10 s; gives up after two minutes of failing without progress. */
        public static Policy defaults() {
            return new Policy(Duration.ofMillis(100), Duration.ofSeconds(10), Duration.ofMinutes(2));
        }
    }

    /** One run of a loop: returns when the loop is told to stop, throws when it fails. */
    @FunctionalInterface
    public interface Attempt {
        void run(Progress progress) throws Exception;
    }

    /**
     * What an attempt calls when it did useful work (a batch handled, a poll that found nothing to
     * do): ends a run of failures. Not before the work is done, so a record that fails every time
     * still ends in a give-up.
     */
    @FunctionalInterface
    public interface Progress {
        void made();
    }

    /** Waits between attempts; returns early once {@code stopping} holds. */
    @FunctionalInterface
    public interface Sleeper {
        void sleep(Duration pause, BooleanSupplier stopping) throws InterruptedException;
    }

    private final MeterRegistry meters;
    private final Policy policy;
    private final LongSupplier nanoClock;
    private final Sleeper sleeper;
    private final Map<String, Throwable> gaveUp = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<BiConsumer<String, Throwable>> giveUpListeners = new CopyOnWriteArrayList<>();

    public LoopSupervisor(MeterRegistry meters, Policy policy) {
        this(meters, policy, System::nanoTime, LoopSupervisor::pause);
    }

    /** With a clock and a sleeper of the caller's, for tests that do not wait for real backoffs. */
    public LoopSupervisor(MeterRegistry meters, Policy policy, LongSupplier nanoClock, Sleeper sleeper) {
        this.meters = Objects.requireNonNull(meters, "meters");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
    }

    /**
     * Called once per loop that gives up, with its name and last failure, on the loop's thread. The
     * node fences itself here; a listener must not block for long.
     */
    public void onGiveUp(BiConsumer<String, Throwable> listener) {
        giveUpListeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** False once any loop gave up. */
    public boolean healthy() {
        return gaveUp.isEmpty();
    }

    /** Restarts so far of {@code loop}. */
    public double restarts(String loop) {
        Counter c = meters.find(RESTARTS_METER).tag("loop", loop).counter();
        return c == null ? 0 : c.count();
    }

    /**
     * Runs {@code attempt} on the calling thread, again after each unexpected failure, until it
     * returns (the loop stopped) or the loop gives up.
     *
     * @param stopping true once the loop's owner closes it: a failure then is the closing, not a fault
     * @return true if the loop stopped, false if it gave up
     */
    public boolean run(String loop, BooleanSupplier stopping, Attempt attempt) {
        return run(loop, stopping, attempt, true);
    }

    /**
     * As {@link #run}, for a loop that serves one client (a backlog reader): giving up ends that loop
     * only, logged and counted, and leaves the node ready, since one client's broken backlog is no
     * reason to take every other client off the node.
     */
    public boolean runForOneClient(String loop, BooleanSupplier stopping, Attempt attempt) {
        return run(loop, stopping, attempt, false);
    }

    private boolean run(String loop, BooleanSupplier stopping, Attempt attempt, boolean nodeWide) {
        restartCounter(loop); // the loop's series from its start, so rate() and alerts see the first restart
        Streak streak = new Streak();
        Progress progress = streak::progress;
        while (true) {
            Throwable failure;
            try {
                attempt.run(progress);
                return true;
            } catch (InterruptedException e) {
                if (stopping.getAsBoolean()) {
                    return true;
                }
                failure = e;
            } catch (Throwable e) { // an Error too: it is logged and ends in a give-up, never silently
                failure = e;
            }
            if (stopping.getAsBoolean()) {
                return true; // closing woke it up
            }
            long now = nanoClock.getAsLong();
            if (streak.since < 0) {
                streak.since = now;
            }
            Duration failing = Duration.ofNanos(now - streak.since);
            if (!retriable(failure) || failing.compareTo(policy.giveUpAfter()) > 0) {
                if (nodeWide) {
                    giveUp(loop, failure, failing);
                } else {
                    Counter.builder(GAVE_UP_METER).description("Loops of one client that gave up and ended")
                            .tag("loop", loop).register(meters).increment();
                    log.error("Loop {} gave up after failing for {} s; it ends", loop, failing.toSeconds(), failure);
                }
                return false;
            }
            Duration pause = streak.nextPause();
            count(loop);
            if (streak.failures == 1) {
                log.error("Loop {} failed; restarting it in {} ms", loop, pause.toMillis(), failure);
            } else {
                log.warn("Loop {} failed again ({} in a row, for {} s); restarting it in {} ms: {}", loop,
                        streak.failures, failing.toSeconds(), pause.toMillis(), failure.toString());
            }
            try {
                sleeper.sleep(pause, stopping);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                if (!stopping.getAsBoolean()) {
                    if (nodeWide) {
                        giveUp(loop, e, failing);
                    }
                    return false;
                }
                return true;
            }
            if (stopping.getAsBoolean()) {
                return true;
            }
        }
    }

    /** Runs {@link #run} on a daemon thread of its own, named {@code fleetmq-<loop>}. */
    public Thread start(String loop, BooleanSupplier stopping, Attempt attempt) {
        Thread t = new Thread(() -> run(loop, stopping, attempt), "fleetmq-" + loop);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * A task for a {@link java.util.concurrent.ScheduledExecutorService} that does not die of an
     * exception: it is logged and counted, and a periodic task runs again at its next time (the JDK
     * would otherwise cancel it without a word). A task failing for longer than
     * {@link Policy#giveUpAfter} without one success, or failing with an {@link Error}, gives up.
     */
    public Runnable guard(String loop, Runnable task) {
        Objects.requireNonNull(task, "task");
        Streak streak = new Streak();
        return () -> {
            try {
                task.run();
                streak.progress();
            } catch (Throwable e) {
                long now = nanoClock.getAsLong();
                synchronized (streak) {
                    if (streak.since < 0) {
                        streak.since = now;
                    }
                    streak.failures++;
                }
                Duration failing = Duration.ofNanos(now - streak.since);
                if (!retriable(e) || failing.compareTo(policy.giveUpAfter()) > 0) {
                    giveUp(loop, e, failing);
                    return;
                }
                count(loop);
                log.error("Task of {} failed; it runs again at its next time, if it has one", loop, e);
            }
        };
    }

    /** Failures that another attempt cannot mend: the node must not go on as if it could. */
    static boolean retriable(Throwable e) {
        return !(e instanceof Error
                || e instanceof AuthenticationException
                || e instanceof AuthorizationException
                || e instanceof InvalidTopicException
                || e instanceof UnsupportedVersionException);
    }

    private void count(String loop) {
        restartCounter(loop).increment();
    }

    private Counter restartCounter(String loop) {
        return Counter.builder(RESTARTS_METER)
                .description("Background loops and timer tasks restarted after an unexpected failure")
                .tag("loop", loop)
                .register(meters);
    }

    private void giveUp(String loop, Throwable failure, Duration failing) {
        log.error("Loop {} gave up after failing for {} s; the node is no longer ready", loop,
                failing.toSeconds(), failure);
        if (gaveUp.putIfAbsent(loop, failure) != null) {
            return;
        }
        for (BiConsumer<String, Throwable> listener : giveUpListeners) {
            try {
                listener.accept(loop, failure);
            } catch (RuntimeException e) {
                log.error("Give-up listener failed for loop {}", loop, e);
            }
        }
    }

    @Override
    public String name() {
        return "loops";
    }

    @Override
    public HealthStatus check() {
        if (gaveUp.isEmpty()) {
            return HealthStatus.up("every background loop runs");
        }
        StringBuilder detail = new StringBuilder("gave up: ");
        gaveUp.forEach((loop, cause) -> detail.append(loop).append(" (").append(HealthStatus.describe(cause)).append(") "));
        return HealthStatus.down(detail.toString().trim());
    }

    private static void pause(Duration pause, BooleanSupplier stopping) throws InterruptedException {
        long end = System.nanoTime() + pause.toNanos();
        long left;
        // In short slices, so closing a loop does not wait out its backoff.
        while ((left = end - System.nanoTime()) > 0 && !stopping.getAsBoolean()) {
            Thread.sleep(Math.max(1, Math.min(50, left / 1_000_000)));
        }
    }

    /** The failures in a row of one loop; progress ends them. */
    private final class Streak {
        volatile long since = -1;
        int failures;
        private Duration next = policy.firstBackoff();

        /** Called on every poll: costs one volatile read unless failures are to be forgotten. */
        void progress() {
            if (since < 0) {
                return;
            }
            synchronized (this) {
                since = -1;
                failures = 0;
                next = policy.firstBackoff();
            }
        }

        synchronized Duration nextPause() {
            failures++;
            Duration pause = next;
            Duration doubled = next.multipliedBy(2);
            next = doubled.compareTo(policy.maxBackoff()) > 0 ? policy.maxBackoff() : doubled;
            return pause;
        }
    }
}
