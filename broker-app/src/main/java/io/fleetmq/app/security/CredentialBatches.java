package io.fleetmq.app.security;

import io.fleetmq.core.security.Credential;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Reads the credentials of many user names in one query while their CONNECTs wait: a fleet whose
 * devices each have a user name of their own, reconnecting at once to a node that never saw them,
 * costs that node one read per batch of user names instead of one per device.
 *
 * <p>A CONNECT that finds nothing in the cache names its user name as wanted ({@link #want}, on the
 * thread that took the CONNECT, before it waits for an auth thread), so by the time an auth thread
 * takes it, the user names of every CONNECT queued behind it are wanted too. The auth thread then
 * waits for its user name's batch ({@link #await}), and reads the next batch itself, everything
 * wanted so far up to {@link #MAX_BATCH} user names, whenever no other thread is reading one. No
 * thread of its own: batches are read by the auth threads that wait for them.
 */
final class CredentialBatches {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(CredentialBatches.class);

    /** User names read in one query at most. */
    static final int MAX_BATCH = 500;
    /** User names wanted and not read yet at most; beyond, a CONNECT reads its own. */
    static final int MAX_WANTED = 20_000;

    private final Function<List<String>, Map<String, List<Credential>>> reader;
    private final Map<String, CompletableFuture<Map<String, List<Credential>>>> wanted = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean reading = new AtomicBoolean();
    private final Counts counts;

    /**
     * Queries run and the user names they read, over every provider chain of the node (a chain is
     * built again when the authentication settings change; the counts go on).
     */
    record Counts(LongAdder queries, LongAdder names) {
        Counts() {
            this(new LongAdder(), new LongAdder());
        }
    }

    /**
     * @param reader reads the credentials of the user names given (a user name without any may be
     *               absent from its answer); runs on an auth thread
     */
    CredentialBatches(Function<List<String>, Map<String, List<Credential>>> reader, Counts counts) {
        this.reader = reader;
        this.counts = counts;
    }

    /** Asks for the credentials of {@code username} to be read with the next batch. */
    void want(String username) {
        if (wanted.containsKey(username) || wanted.size() >= MAX_WANTED) {
            return;
        }
        if (wanted.putIfAbsent(username, new CompletableFuture<>()) == null) {
            queue.add(username);
        }
    }

    /**
     * The credentials of {@code username} as its batch read them, reading batches on this thread
     * while no other does; null if it was not wanted, its batch failed or {@code timeoutNanos} passed
     * (the caller then reads them itself).
     */
    List<Credential> await(String username, long timeoutNanos) {
        CompletableFuture<Map<String, List<Credential>>> mine = wanted.get(username);
        if (mine == null) {
            return null;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        while (!mine.isDone()) {
            if (reading.compareAndSet(false, true)) {
                boolean read;
                try {
                    read = readBatch();
                } finally {
                    reading.set(false);
                }
                if (read) {
                    continue;
                }
                // Nothing queued: the user name is about to be (want() adds it to the map first).
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            try {
                // Short waits: the batch being read may not hold this user name, and then this thread
                // reads the next one.
                mine.get(Math.min(left, TimeUnit.MILLISECONDS.toNanos(2)), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                // read the next batch, or wait again
            } catch (ExecutionException e) {
                return null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        if (mine.isCompletedExceptionally()) {
            return null;
        }
        return mine.join().getOrDefault(username, List.of());
    }

    /** Reads the next batch; false if none was queued. */
    private boolean readBatch() {
        List<String> batch = new ArrayList<>();
        String next;
        while (batch.size() < MAX_BATCH && (next = queue.poll()) != null) {
            batch.add(next);
        }
        if (batch.isEmpty()) {
            return false;
        }
        try {
            Map<String, List<Credential>> read = reader.apply(batch);
            counts.queries().increment();
            counts.names().add(batch.size());
            for (String username : batch) {
                CompletableFuture<Map<String, List<Credential>>> f = wanted.remove(username);
                if (f != null) {
                    f.complete(read);
                }
            }
        } catch (RuntimeException e) {
            // Each waiting CONNECT then reads its own, and is refused as unavailable (and counted) if that fails too.
            log.debug("Credentials of {} user names not read: {}", batch.size(), e.toString());
            for (String username : batch) {
                CompletableFuture<Map<String, List<Credential>>> f = wanted.remove(username);
                if (f != null) {
                    f.completeExceptionally(e);
                }
            }
        }
        return true;
    }
}
