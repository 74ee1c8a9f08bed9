package io.fleetmq.session;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;

/** Runs nothing until the test says so, so that mailbox turns can be counted. */
final class ManualExecutor implements Executor {

    private final Queue<Runnable> queue = new ArrayDeque<>();

    @Override
    public synchronized void execute(Runnable command) {
        queue.add(command);
    }

    synchronized int queued() {
        return queue.size();
    }

    /** Runs the oldest queued command (one mailbox turn); fails if there is none. */
    void runNext() {
        Runnable next;
        synchronized (this) {
            next = queue.remove();
        }
        next.run();
    }

    /** Runs commands, including those they queue, until none is left; returns how many ran. */
    int runAll() {
        int ran = 0;
        while (queued() > 0) {
            runNext();
            ran++;
        }
        return ran;
    }
}
