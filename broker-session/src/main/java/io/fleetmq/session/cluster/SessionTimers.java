package io.fleetmq.session.cluster;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The connect sequence's timers for offline sessions: at most one pending timer per client ID and
 * kind (will delay, session expiry), belonging to one epoch of the session. Scheduling the same
 * (client ID, epoch, kind) again for the same time keeps the timer that is there, so a rebalance
 * that hands the same partitions back, or a dead node settled twice, does not multiply timers; a
 * newer epoch or a new due time replaces (cancels) the old one.
 *
 * <p>Not thread-safe: used on the connect sequence's thread only. A timer fires on the scheduler's
 * thread and hands its task to that thread through {@code submit}.
 */
final class SessionTimers {

    /** The two timers an offline session can have. */
    enum Kind { WILL, EXPIRY }

    /** Where a timer runs; a {@link ScheduledExecutorService} in the node, a manual clock in tests. */
    interface Scheduler {
        /** Runs {@code task} after {@code delayMillis}; the result cancels it. */
        Cancellable schedule(Runnable task, long delayMillis);
    }

    interface Cancellable {
        void cancel();
    }

    private record Key(String clientId, Kind kind) {
    }

    private record Pending(long epoch, long dueAtMillis, Cancellable handle) {
    }

    private final Scheduler scheduler;
    private final Consumer<Runnable> submit;
    private final Map<Key, Pending> pending = new HashMap<>();

    /**
     * @param submit hands a due timer's task to the thread that owns this object
     */
    SessionTimers(Scheduler scheduler, Consumer<Runnable> submit) {
        this.scheduler = scheduler;
        this.submit = submit;
    }

    static Scheduler on(ScheduledExecutorService executor) {
        return (task, delayMillis) -> {
            ScheduledFuture<?> f = executor.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
            return () -> f.cancel(false);
        };
    }

    /**
     * Runs {@code task} at {@code dueAtMillis} unless this (client ID, kind) is scheduled again or
     * cancelled first. Returns false if the same timer was pending already (nothing changed).
     */
    boolean schedule(String clientId, long epoch, Kind kind, long dueAtMillis, long nowMillis, Runnable task) {
        Key key = new Key(clientId, kind);
        Pending existing = pending.get(key);
        if (existing != null && existing.epoch() == epoch && existing.dueAtMillis() == dueAtMillis) {
            return false;
        }
        if (existing != null) {
            existing.handle().cancel(); // superseded: a newer epoch, or the same one due at another time
        }
        Pending[] self = new Pending[1];
        Cancellable handle = scheduler.schedule(() -> submit.accept(() -> {
            // Only the timer still registered runs; one cancelled too late to stop the scheduler
            // finds itself replaced here and does nothing.
            if (pending.get(key) == self[0]) {
                pending.remove(key);
                task.run();
            }
        }), Math.max(0, dueAtMillis - nowMillis));
        self[0] = new Pending(epoch, dueAtMillis, handle);
        pending.put(key, self[0]);
        return true;
    }

    /** Cancels both timers of the client ID: it connected again, or its session ended. */
    void cancel(String clientId) {
        for (Kind kind : Kind.values()) {
            Pending p = pending.remove(new Key(clientId, kind));
            if (p != null) {
                p.handle().cancel();
            }
        }
    }

    /** Cancels the timers of every client ID that {@code gone} accepts: its partition went to another node. */
    void cancelIf(java.util.function.Predicate<String> gone) {
        pending.entrySet().removeIf(e -> {
            if (gone.test(e.getKey().clientId())) {
                e.getValue().handle().cancel();
                return true;
            }
            return false;
        });
    }

    /** Timers pending now, for tests and a gauge. */
    int size() {
        return pending.size();
    }
}
