package io.fleetmq.session;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler whose time stands still until the test moves it: {@link #advance} runs, on the test
 * thread, what became due. Used from the test thread only.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {

    private final List<Task> tasks = new ArrayList<>();
    private long nowNanos;

    /** Moves time on by {@code amount} and runs what became due, earliest first. */
    void advance(long amount, TimeUnit unit) {
        long until = nowNanos + unit.toNanos(amount);
        while (true) {
            Task next = tasks.stream().filter(t -> !t.cancelled && t.dueNanos <= until)
                    .min((a, b) -> Long.compare(a.dueNanos, b.dueNanos)).orElse(null);
            if (next == null) {
                break;
            }
            tasks.remove(next);
            nowNanos = Math.max(nowNanos, next.dueNanos);
            next.done = true;
            next.command.run();
        }
        nowNanos = until;
    }

    /** The scheduler's time, as {@link System#nanoTime()} would give it. */
    long nanoTime() {
        return nowNanos;
    }

    /** Tasks scheduled and neither run nor cancelled. */
    int pending() {
        return (int) tasks.stream().filter(t -> !t.cancelled).count();
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        Task t = new Task(command, nowNanos + unit.toNanos(delay));
        tasks.add(t);
        return t;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return (ScheduledFuture<V>) schedule(() -> {
            try {
                callable.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, delay, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public void shutdown() {
    }

    @Override
    public List<Runnable> shutdownNow() {
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return false;
    }

    @Override
    public boolean isTerminated() {
        return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
    }

    private final class Task implements ScheduledFuture<Object> {
        final Runnable command;
        final long dueNanos;
        boolean cancelled;
        boolean done;

        Task(Runnable command, long dueNanos) {
            this.command = command;
            this.dueNanos = dueNanos;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueNanos - nowNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done) {
                return false;
            }
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }
    }
}
