package io.fleetmq.core.actor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue of one actor (a connected client, see DESIGN "The client actor"): tasks told to it
 * run one at a time, in the order they were told, on a shared executor. Each task sees everything
 * the tasks before it did, so the actor's state needs no locks even though successive tasks may
 * run on different threads.
 *
 * <p>Telling is lock-free: an unbounded lock-free queue plus one atomic flag that makes sure a
 * single turn is scheduled at a time. A turn runs at most {@value #BATCH_SIZE} tasks and then hands
 * the thread back to the executor, so that one busy client cannot starve the others sharing the
 * pool.
 *
 * <p>An optional end-of-turn step runs after the tasks of every turn, on the same thread and
 * still inside the turn, so it sees the actor's state like a task does. It is where an actor
 * finishes what its tasks started in bulk: flushing what they wrote to a socket once instead of
 * once per task, or telling itself the next slice of a long backlog so that the slice waits for a
 * turn of its own.
 *
 * <p>A task that throws is logged and the mailbox carries on with the next: one bad packet must
 * not silence a client, let alone its neighbours.
 */
public final class Mailbox {

    /** Tasks per turn: enough to amortise scheduling, few enough to keep latency fair. */
    static final int BATCH_SIZE = 64;

    private static final Logger LOG = LoggerFactory.getLogger(Mailbox.class);

    private final Executor executor;
    private final String name;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    // Plain fields updated through VarHandles rather than Atomic* objects: a node holds one mailbox
    // per connection, and each Atomic* would be an object of its own.
    private static final VarHandle SCHEDULED;
    private static final VarHandle PENDING;
    private static final VarHandle REJECTED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            SCHEDULED = lookup.findVarHandle(Mailbox.class, "scheduled", boolean.class);
            PENDING = lookup.findVarHandle(Mailbox.class, "pending", int.class);
            REJECTED = lookup.findVarHandle(Mailbox.class, "rejected", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Set while a turn is scheduled or running; only its winner hands a turn to the executor. */
    private volatile boolean scheduled;
    private volatile int pending;
    private volatile long rejected;
    private final Runnable turn = this::runTurn;
    private final Runnable endOfTurn;
    private volatile boolean closed;

    /** @param name identifies the actor in logs, e.g. its client ID */
    public Mailbox(Executor executor, String name) {
        this(executor, name, null);
    }

    /**
     * @param name      identifies the actor in logs, e.g. its client ID
     * @param endOfTurn runs after the tasks of each turn, before the mailbox lets another thread in;
     *                  null for none. Tasks it tells run in a later turn.
     */
    public Mailbox(Executor executor, String name, Runnable endOfTurn) {
        this.executor = Objects.requireNonNull(executor, "executor");
        this.name = Objects.requireNonNull(name, "name");
        this.endOfTurn = endOfTurn;
    }

    /**
     * Queues a task to run after all tasks told before it.
     *
     * @return {@code false} if the mailbox is closed: the task will not run and is counted in
     *     {@link #rejectedCount()}
     * @throws RejectedExecutionException if the executor refuses the turn (it is shutting down);
     *     the task stays queued and runs if a later tell gets a turn scheduled
     */
    public boolean tell(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (closed) {
            REJECTED.getAndAdd(this, 1L);
            return false;
        }
        PENDING.getAndAdd(this, 1);
        tasks.offer(task);
        scheduleTurn();
        return true;
    }

    /**
     * Stops accepting tasks. Tasks told before still run: they may be the actor's own clean-up,
     * and dropping them would lose messages without counting them.
     */
    public void close() {
        closed = true;
    }

    public boolean isClosed() {
        return closed;
    }

    /** Tasks accepted and not yet started. */
    public int pendingCount() {
        return pending;
    }

    /** Tasks refused because the mailbox was closed. */
    public long rejectedCount() {
        return rejected;
    }

    public String name() {
        return name;
    }

    @Override
    public String toString() {
        return "Mailbox[" + name + "]";
    }

    private void scheduleTurn() {
        if (SCHEDULED.compareAndSet(this, false, true)) {
            try {
                executor.execute(turn);
            } catch (RejectedExecutionException e) {
                scheduled = false; // so that a later tell can try again
                throw e;
            }
        }
    }

    private void runTurn() {
        try {
            for (int i = 0; i < BATCH_SIZE; i++) {
                Runnable task = tasks.poll();
                if (task == null) {
                    break;
                }
                PENDING.getAndAdd(this, -1);
                runSafely(task);
            }
            if (endOfTurn != null) {
                runSafely(endOfTurn);
            }
        } finally {
            // Also after an Error, so the mailbox never stays marked as scheduled with no turn.
            scheduled = false;
            // A tell that saw the flag still set has queued its task before we cleared it; this
            // check is what gets that task a turn.
            if (!tasks.isEmpty()) {
                scheduleTurn();
            }
        }
    }

    private void runSafely(Runnable task) {
        try {
            task.run();
        } catch (Exception e) {
            LOG.warn("Task failed in mailbox {}; continuing", name, e);
        }
    }
}
