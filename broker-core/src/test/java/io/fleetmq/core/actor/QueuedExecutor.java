package io.fleetmq.core.actor;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * An executor that runs nothing until the test says so, making turn-taking deterministic. Fed by
 * any thread, run by the test thread.
 */
final class QueuedExecutor implements Executor {

    private final Queue<Runnable> queue = new ArrayDeque<>();
    private boolean rejecting;

    @Override
    public synchronized void execute(Runnable command) {
        if (rejecting) {
            throw new RejectedExecutionException("shutting down");
        }
        queue.add(command);
    }

    synchronized int queued() {
        return queue.size();
    }

    synchronized void rejecting(boolean rejecting) {
        this.rejecting = rejecting;
    }

    /** Runs the oldest queued command; fails if there is none. */
    void runNext() {
        Runnable next;
        synchronized (this) {
            next = queue.remove();
        }
        next.run();
    }

    /** Runs commands, including those they queue, until none is left. */
    void runAll() {
        while (queued() > 0) {
            runNext();
        }
    }
}
