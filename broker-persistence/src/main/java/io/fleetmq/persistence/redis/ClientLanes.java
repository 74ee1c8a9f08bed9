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
import java.util.function.BiFunction;
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
 * <p>Removes and packet identifiers that wait behind a running operation go to Redis together, in
 * their order, as one call of the merger the lanes were made with (see {@link #submitWrite}): a
 * client acknowledging a window of messages costs one round trip for the lot rather than one per
 * message, and its reads wait behind fewer calls.
 *
 * <p>Thread-safe; the bookkeeping is under one lock, the Redis commands run outside it.
 */
final class ClientLanes {

    static final Duration FIRST_RETRY = Duration.ofMillis(100);
    static final Duration MAX_RETRY = Duration.ofSeconds(2);

    /** What an operation does to the client's queue; decides how waiting operations collapse. */
    enum Op {
        READ("read"), REMOVE("remove"), SENT_WITH("sent_with"), DELETE("delete"), RELEASE("release"),
        /** Messages a connected session held in memory, stored with their packet identifiers. */
        STORE("store");

        final String label;

        Op(String label) {
            this.label = label;
        }

        boolean write() {
            return this != READ;
        }
    }

    /** Most waiting writes merged into one call. */
    static final int MAX_MERGED = 256;

    /** A write that can be merged with its neighbours: what {@link #submitWrite} was given. */
    record Write(Op op, long seq, int arg) {
    }

    private static final class Task {
        final Op op;
        final long seq;
        final Supplier<CompletionStage<?>> action;
        /** A mergeable write, or null. */
        final Write write;
        /** A merged call: the tasks it completes; null for a task of its own. */
        List<Task> parts;
        final CompletableFuture<Object> result = new CompletableFuture<>();
        /** What a moot operation completes with: nothing, or no messages deleted. */
        final Object mootValue;
        volatile boolean moot;
        int attempts;

        Task(Op op, long seq, Supplier<CompletionStage<?>> action, Write write) {
            this.op = op;
            this.seq = seq;
            this.action = action;
            this.write = write;
            this.mootValue = op == Op.DELETE ? (Object) 0L : null;
        }
    }

    private static final class Lane {
        final ArrayDeque<Task> waiting = new ArrayDeque<>();
        Task running;
    }

    private final ScheduledExecutorService retryTimer;
    private final Consumer<Op> onError;
    private final BiFunction<String, List<Write>, CompletionStage<?>> merger;
    private final Map<String, Lane> lanes = new HashMap<>();
    private final AtomicInteger pending = new AtomicInteger();

    /**
     * @param retryTimer where retries wait; null: a failed write fails its future (no retries)
     * @param onError    told of every failed attempt, for the error counter
     */
    ClientLanes(ScheduledExecutorService retryTimer, Consumer<Op> onError) {
        this(retryTimer, onError, null);
    }

    /**
     * @param merger runs one or more writes given to {@link #submitWrite}, in order, as one atomic
     *               call; null if nothing is submitted that way
     */
    ClientLanes(ScheduledExecutorService retryTimer, Consumer<Op> onError,
            BiFunction<String, List<Write>, CompletionStage<?>> merger) {
        this.retryTimer = retryTimer;
        this.onError = onError;
        this.merger = merger;
    }

    /** Operations waiting or running, over all clients. */
    int pending() {
        return pending.get();
    }

    @SuppressWarnings("unchecked")
    <T> CompletableFuture<T> submit(String clientId, Op op, long seq, Supplier<? extends CompletionStage<T>> action) {
        return (CompletableFuture<T>) enqueue(clientId,
                new Task(op, seq, (Supplier<CompletionStage<?>>) (Supplier<?>) action, null));
    }

    /**
     * A remove or packet identifier ({@code arg}) for entry {@code seq}, run by the merger together
     * with the writes of the same kinds waiting next to it; completes (with null) once Redis took it.
     */
    CompletableFuture<Object> submitWrite(String clientId, Op op, long seq, int arg) {
        if (op != Op.REMOVE && op != Op.SENT_WITH) {
            throw new IllegalArgumentException("not a mergeable write: " + op);
        }
        if (merger == null) {
            throw new IllegalStateException("these lanes merge no writes");
        }
        return enqueue(clientId, new Task(op, seq, null, new Write(op, seq, arg)));
    }

    private CompletableFuture<Object> enqueue(String clientId, Task task) {
        Op op = task.op;
        long seq = task.seq;
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
                    case READ, RELEASE, STORE -> false;
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
                    start = next(clientId, lane);
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
        return shared != null ? shared : task.result;
    }

    /**
     * Under the lock: takes the lane's next task and makes it the running one; a mergeable write
     * takes the mergeable writes waiting right after it along, as one call.
     */
    private Task next(String clientId, Lane lane) {
        Task first = lane.waiting.poll();
        if (first == null || first.write == null || lane.waiting.isEmpty() || lane.waiting.peek().write == null) {
            lane.running = first;
            return first;
        }
        List<Task> parts = new ArrayList<>();
        parts.add(first);
        while (parts.size() < MAX_MERGED && !lane.waiting.isEmpty() && lane.waiting.peek().write != null) {
            parts.add(lane.waiting.poll());
        }
        List<Write> writes = new ArrayList<>(parts.size());
        for (Task t : parts) {
            writes.add(t.write);
        }
        Task merged = new Task(first.op, first.seq, () -> merger.apply(clientId, writes), null);
        merged.parts = parts;
        lane.running = merged;
        return merged;
    }

    private void run(String clientId, Task task) {
        if (task.moot) {
            finish(clientId, task, task.mootValue, null);
            return;
        }
        CompletionStage<?> stage;
        try {
            stage = task.action != null ? task.action.get() : merger.apply(clientId, List.of(task.write));
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
        for (Task t : task.parts != null ? task.parts : List.of(task)) {
            pending.decrementAndGet();
            if (error == null) {
                t.result.complete(task.parts != null ? t.mootValue : value);
            } else {
                t.result.completeExceptionally(error);
            }
        }
        Task next;
        synchronized (lanes) {
            Lane lane = lanes.get(clientId);
            next = next(clientId, lane);
            if (next == null) {
                lanes.remove(clientId);
            }
        }
        if (next != null) {
            run(clientId, next);
        }
    }
}
