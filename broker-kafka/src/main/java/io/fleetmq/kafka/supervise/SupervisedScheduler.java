package io.fleetmq.kafka.supervise;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The node's shared timer pool, with every {@link Runnable} it schedules guarded by
 * {@link LoopSupervisor#guard}: a task that throws is logged and counted instead of being cancelled
 * by the JDK in silence, and a periodic one keeps its schedule. {@code execute} and {@code submit}
 * go through {@link #schedule(Runnable, long, TimeUnit)} and are guarded too. Callables are not:
 * their failure is the result their caller reads.
 */
public final class SupervisedScheduler extends ScheduledThreadPoolExecutor {

    private final LoopSupervisor supervisor;
    private final String loop;

    public SupervisedScheduler(int threads, ThreadFactory factory, LoopSupervisor supervisor, String loop) {
        super(threads, factory);
        this.supervisor = supervisor;
        this.loop = loop;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return super.schedule(supervisor.guard(loop, command), delay, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return super.scheduleAtFixedRate(supervisor.guard(loop, command), initialDelay, period, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return super.scheduleWithFixedDelay(supervisor.guard(loop, command), initialDelay, delay, unit);
    }
}
