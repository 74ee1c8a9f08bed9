package io.fleetmq.persistence.redis;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Runs one client's queue operations one after another, in the order they were asked for, and
 * retries a failed write (remove, packet identifier, delete) with backoff until Redis takes it.
 * Dropping one would be worse than waiting: a lost remove redelivers an acknowledged message, a
 * lost delete hands an old session's queue to a clean start. A read waits behind the writes asked
 * for before it, so it never sees what they remove, and is not retried (its caller tries again).
 *
 * <p>Memory stays bounded while Redis is away, because writes that are waiting collapse: a delete
 * makes every earlier waiting write of the client moot (and stops retrying the one in progress), a
 * remove makes a waiting packet identifier of the same entry moot, a second remove of one entry
 * shares the first, and a newer packet identifier replaces an older one. So a client holds at most
 * one waiting write per entry it had in flight, and no more than one delete.
 *
 * <p>Thread-safe; the bookkeeping is under one lock, the Redis commands run outside it.
 */
final class ClientLanes {

    static final Duration FIRST_RETRY = Duration.ofMillis(100);
    static final Duration MAX_RETRY = Duration.ofSeconds(2);

    /** What an operation does to the client's queue; decides how waiting operations collapse. */
    enum Op {
        READ("read"), REMOVE("remove"), SENT_WITH("sent_with"), DELETE("delete"), RELEASE("release");

        final String label;

        Op(String label) {
            this.label = label;
        }

        boolean write() {
            return this != READ;
        }
    }

    private static final class Task {
        final Op op;
        final long seq;
        final Supplier<CompletionStage<?>> action;
        final CompletableFuture<Object> result = new CompletableFuture<>();
        /** What a moot operation completes with: nothing, or no messages deleted. */
        final Object mootValue;
        volatile boolean moot;
        int attempts;

        Task(Op op, long seq, Supplier<CompletionStage<?>> action) {
            this.op = op;
            this.seq = seq;
            this.action = action;
            this.mootValue = op == Op.DELETE ? (Object) 0L : null;
        }
    }

    private static final class Lane {
        final ArrayDeque<Task> waiting = new ArrayDeque<>();
        Task running;
    }

    private final ScheduledExecutorService retryTimer;
    private final Consumer<Op> onError;
    private final Map<String, Lane> lanes = new HashMap<>();
    private final AtomicInteger pending = new AtomicInteger();

    /**
     * @param retryTimer where retries wait; null: a failed write fails its future (no retries)
     * @param onError    told of every failed attempt, for the error counter
     */
    ClientLanes(ScheduledExecutorService retryTimer, Consumer<Op> onError) {
        this.retryTimer = retryTimer;
        this.onError = onError;
    }

    /** Operations waiting or running, over all clients. */
    int pending() {
        return pending.get();
    }

    @SuppressWarnings("unchecked")
    <T> CompletableFuture<T> submit(String clientId, Op op, long seq, Supplier<? extends CompletionStage<T>> action) {
        Task task = new Task(op, seq, (Supplier<CompletionStage<?>>) (Supplier<?>) action);
        List<Task> moot = new ArrayList<>();
        Task start = null;
        CompletableFuture<Object> shared = null;
        synchronized (lanes) {
            Lane lane = lanes.computeIfAbsent(clientId, c -> new Lane());
            for (Iterator<Task> it = lane.waiting.iterator(); it.hasNext(); ) {
                Task t = it.next();
                if (!t.op.write()) {
                    continue; // reads keep their place: they belong to whoever asked
                }
                boolean superseded = switch (op) {
                    case DELETE -> true;
                    case REMOVE -> t.op == Op.SENT_WITH && t.seq == seq;
                    case SENT_WITH -> t.op == Op.SENT_WITH && t.seq == seq;
                    case READ, RELEASE -> false;
                };
                if (op == Op.REMOVE && t.op == Op.REMOVE && t.seq == seq) {
                    shared = t.result;
                }
                if (superseded) {
                    it.remove();
                    moot.add(t);
                }
            }
            if (op == Op.DELETE && lane.running != null && lane.running.op.write()) {
                lane.running.moot = true; // it ends at its next retry; the delete does its work
            }
            if (shared == null) {
                lane.waiting.add(task);
                pending.incrementAndGet();
                if (lane.running == null) {
                    start = lane.waiting.poll();
                    lane.running = start;
                }
            }
        }
        for (Task t : moot) {
            pending.decrementAndGet();
            t.result.complete(t.mootValue);
        }
        if (start != null) {
            run(clientId, start);
        }
        return (CompletableFuture<T>) (shared != null ? shared : task.result);
    }

    private void run(String clientId, Task task) {
        if (task.moot) {
            finish(clientId, task, task.mootValue, null);
            return;
        }
        CompletionStage<?> stage;
        try {
            stage = task.action.get();
        } catch (RuntimeException e) {
            stage = CompletableFuture.failedFuture(e);
        }
        stage.whenComplete((value, error) -> {
            if (error == null) {
                finish(clientId, task, value, null);
                return;
            }
            onError.accept(task.op);
            if (task.op.write() && retryTimer != null) {
                long delay = Math.min(MAX_RETRY.toMillis(), FIRST_RETRY.toMillis() << Math.min(task.attempts, 10));
                task.attempts++;
                try {
                    retryTimer.schedule(() -> run(clientId, task), delay, TimeUnit.MILLISECONDS);
                    return;
                } catch (RejectedExecutionException stopping) {
                    // The node is stopping: the failure is reported to the caller below.
                }
            }
            finish(clientId, task, null, error);
        });
    }

    private void finish(String clientId, Task task, Object value, Throwable error) {
        pending.decrementAndGet();
        if (error == null) {
            task.result.complete(value);
        } else {
            task.result.completeExceptionally(error);
        }
        Task next;
        synchronized (lanes) {
            Lane lane = lanes.get(clientId);
            next = lane.waiting.poll();
            lane.running = next;
            if (next == null) {
                lanes.remove(clientId);
            }
        }
        if (next != null) {
            run(clientId, next);
        }
    }
}
