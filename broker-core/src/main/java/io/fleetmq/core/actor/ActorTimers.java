package io.fleetmq.core.actor;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Timers for actors (keep-alive, will delay, expiry, retry): after a delay the task is told to the
 * actor's {@link Mailbox}, so it runs in turn with the actor's other tasks and needs no locks.
 * One scheduler thread serves all actors; it only hands tasks over, never runs them.
 */
public final class ActorTimers {

    private static final Logger LOG = LoggerFactory.getLogger(ActorTimers.class);

    private final ScheduledExecutorService scheduler;

    public ActorTimers(ScheduledExecutorService scheduler) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    }

    /**
     * Tells {@code task} to {@code mailbox} after {@code delay}. If the mailbox is closed by then,
     * the task is dropped and counted by the mailbox.
     */
    public Timer schedule(Mailbox mailbox, Duration delay, Runnable task) {
        Objects.requireNonNull(mailbox, "mailbox");
        Objects.requireNonNull(task, "task");
        Timer timer = new Timer();
        timer.future = scheduler.schedule(() -> {
            try {
                mailbox.tell(() -> timer.fire(task));
            } catch (RejectedExecutionException e) {
                LOG.warn("Timer for mailbox {} fired while its executor is shutting down", mailbox.name(), e);
            }
        }, delay.toNanos(), TimeUnit.NANOSECONDS);
        return timer;
    }

    /**
     * A scheduled task that can be cancelled until the moment it starts running in the mailbox,
     * not merely until it is handed over. So an actor that cancels a timer in one of its own tasks
     * can rely on the timer's task never running afterwards, even if it was already queued.
     */
    public static final class Timer {

        private static final int SCHEDULED = 0;
        private static final int RUN = 1;
        private static final int CANCELLED = 2;

        private final AtomicInteger state = new AtomicInteger(SCHEDULED);
        private volatile ScheduledFuture<?> future;

        private Timer() {
        }

        /** @return {@code true} if the task will not run, {@code false} if it has already started */
        public boolean cancel() {
            if (!state.compareAndSet(SCHEDULED, CANCELLED)) {
                return state.get() == CANCELLED;
            }
            ScheduledFuture<?> scheduled = future;
            if (scheduled != null) { // null only while schedule() has not returned yet
                scheduled.cancel(false);
            }
            return true;
        }

        private void fire(Runnable task) {
            if (state.compareAndSet(SCHEDULED, RUN)) {
                task.run();
            }
        }
    }
}
