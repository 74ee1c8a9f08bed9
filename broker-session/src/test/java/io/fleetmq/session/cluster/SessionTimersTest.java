package io.fleetmq.session.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import org.junit.jupiter.api.Test;

/**
 * One pending timer per (client ID, epoch, kind): the connect sequence schedules the same offline
 * session's will and expiry again on every rebalance and settlement, and each must fire once.
 */
class SessionTimersTest {

    /** A clock moved by the test; timers run when it passes their time. */
    private static final class ManualScheduler implements SessionTimers.Scheduler {
        private final List<Timer> timers = new ArrayList<>();
        long now;

        private static final class Timer {
            final long at;
            final Runnable task;
            boolean cancelled;

            Timer(long at, Runnable task) {
                this.at = at;
                this.task = task;
            }
        }

        @Override
        public SessionTimers.Cancellable schedule(Runnable task, long delayMillis) {
            Timer t = new Timer(now + delayMillis, task);
            timers.add(t);
            return () -> t.cancelled = true;
        }

        /** Timers the scheduler still holds (not cancelled, not run). */
        long live() {
            return timers.stream().filter(t -> !t.cancelled).count();
        }

        void advanceTo(long millis) {
            now = millis;
            List<Timer> due = timers.stream().filter(t -> t.at <= now).toList();
            timers.removeAll(due);
            due.stream().filter(t -> !t.cancelled).forEach(t -> t.task.run());
        }

        /** Runs a timer even though it was cancelled: a cancel that came too late to stop it. */
        void fireCancelledToo(long millis) {
            now = millis;
            List<Timer> due = timers.stream().filter(t -> t.at <= now).toList();
            timers.removeAll(due);
            due.forEach(t -> t.task.run());
        }
    }

    private final ManualScheduler scheduler = new ManualScheduler();
    /** The connect sequence's task queue: timers hand their work over, the test runs it. */
    private final Queue<Runnable> submitted = new ArrayDeque<>();
    private final SessionTimers timers = new SessionTimers(scheduler, submitted::add);
    private final List<String> fired = new ArrayList<>();

    private void runSubmitted() {
        Runnable r;
        while ((r = submitted.poll()) != null) {
            r.run();
        }
    }

    private boolean expiry(String clientId, long epoch, long dueAt) {
        return timers.schedule(clientId, epoch, SessionTimers.Kind.EXPIRY, dueAt, scheduler.now,
                () -> fired.add("expiry " + clientId + "@" + epoch));
    }

    private boolean will(String clientId, long epoch, long dueAt) {
        return timers.schedule(clientId, epoch, SessionTimers.Kind.WILL, dueAt, scheduler.now,
                () -> fired.add("will " + clientId + "@" + epoch));
    }

    @Test
    void schedulingTheSameTimerOnEveryRebalanceKeepsOneAndItFiresOnce() {
        assertTrue(expiry("c1", 3, 10_000));
        assertTrue(will("c1", 3, 5_000));
        for (int rebalance = 0; rebalance < 5; rebalance++) {
            assertFalse(expiry("c1", 3, 10_000), "the pending timer is kept");
            assertFalse(will("c1", 3, 5_000));
        }
        assertEquals(2, timers.size());
        assertEquals(2, scheduler.live(), "no extra timers pile up in the scheduler");

        scheduler.advanceTo(5_000);
        runSubmitted();
        assertEquals(List.of("will c1@3"), fired);
        scheduler.advanceTo(10_000);
        runSubmitted();
        assertEquals(List.of("will c1@3", "expiry c1@3"), fired);
        assertEquals(0, timers.size());
    }

    @Test
    void aNewerEpochOrDueTimeSupersedesAndCancelsTheOldTimer() {
        expiry("c1", 3, 10_000);
        assertTrue(expiry("c1", 4, 20_000));
        assertEquals(1, timers.size());
        assertEquals(1, scheduler.live(), "the epoch 3 timer was cancelled");
        assertTrue(expiry("c1", 4, 30_000), "a new due time (the session's expiry changed) replaces it too");
        assertEquals(1, scheduler.live());

        scheduler.advanceTo(30_000);
        runSubmitted();
        assertEquals(List.of("expiry c1@4"), fired);
    }

    @Test
    void aTimerCancelledTooLateToStopTheSchedulerDoesNotRun() {
        expiry("c1", 3, 10_000);
        expiry("c1", 4, 10_000); // supersedes, but the scheduler runs the old one anyway
        scheduler.fireCancelledToo(10_000);
        runSubmitted();
        assertEquals(List.of("expiry c1@4"), fired);
    }

    @Test
    void cancelStopsBothKindsOfOneClientOnly() {
        expiry("c1", 1, 10_000);
        will("c1", 1, 5_000);
        expiry("c2", 1, 10_000);
        timers.cancel("c1"); // c1 connected again
        scheduler.advanceTo(10_000);
        runSubmitted();
        assertEquals(List.of("expiry c2@1"), fired);
    }

    @Test
    void cancelIfDropsTheTimersOfPartitionsThatMoved() {
        expiry("a1", 1, 10_000);
        expiry("b1", 1, 10_000);
        timers.cancelIf(clientId -> clientId.startsWith("a"));
        assertEquals(1, timers.size());
        scheduler.advanceTo(10_000);
        runSubmitted();
        assertEquals(List.of("expiry b1@1"), fired);
    }

    @Test
    void aTimerDueAlreadyRunsWithoutDelay() {
        scheduler.now = 50_000;
        will("c1", 2, 10_000);
        scheduler.advanceTo(50_000);
        runSubmitted();
        assertEquals(List.of("will c1@2"), fired);
    }
}
