package io.fleetmq.persistence.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.testkit.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Writes to DEVICE queues are never dropped: they wait (in order, per client) and are retried
 * until "Redis" takes them; waiting writes collapse so memory stays bounded.
 */
class ClientLanesTest {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final AtomicBoolean redisUp = new AtomicBoolean(true);
    /** What reached "Redis", in order. */
    private final List<String> applied = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger attempts = new AtomicInteger();
    private final Map<ClientLanes.Op, AtomicInteger> errors = new ConcurrentHashMap<>();
    private final ClientLanes lanes = new ClientLanes(timer,
            op -> errors.computeIfAbsent(op, o -> new AtomicInteger()).incrementAndGet());

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    private CompletionStage<Object> redis(String what) {
        attempts.incrementAndGet();
        if (!redisUp.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException("Connection refused"));
        }
        applied.add(what);
        return CompletableFuture.completedFuture(what.startsWith("delete") ? (Object) 3L : null);
    }

    private CompletableFuture<Object> remove(String client, long seq) {
        return lanes.submit(client, ClientLanes.Op.REMOVE, seq, () -> redis("remove " + client + " " + seq));
    }

    private CompletableFuture<Object> sentWith(String client, long seq, int packetId) {
        return lanes.submit(client, ClientLanes.Op.SENT_WITH, seq,
                () -> redis("sent " + client + " " + seq + " " + packetId));
    }

    private CompletableFuture<Object> delete(String client) {
        return lanes.submit(client, ClientLanes.Op.DELETE, 0, () -> redis("delete " + client));
    }

    private CompletableFuture<Object> read(String client) {
        return lanes.submit(client, ClientLanes.Op.READ, 0, () -> redis("read " + client));
    }

    @Test
    void aFailedRemoveIsRetriedUntilRedisTakesItAndCounted() {
        redisUp.set(false);
        CompletableFuture<Object> removed = remove("c1", 7);
        Await.until(Duration.ofSeconds(20), "a few failed attempts", () -> attempts.get() >= 3);
        assertFalse(removed.isDone(), "not given up on");
        assertEquals(1, lanes.pending());
        redisUp.set(true);
        removed.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
        assertEquals(List.of("remove c1 7"), applied);
        assertTrue(errors.get(ClientLanes.Op.REMOVE).get() >= 3);
        assertEquals(0, lanes.pending());
    }

    @Test
    void oneClientsOperationsKeepTheirOrderAcrossRetries() {
        redisUp.set(false);
        remove("c1", 1);
        sentWith("c1", 2, 11);
        remove("c1", 3);
        CompletableFuture<Object> last = sentWith("c1", 4, 12);
        Await.until(Duration.ofSeconds(20), "first attempt failed", () -> attempts.get() >= 2);
        redisUp.set(true);
        last.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
        assertEquals(List.of("remove c1 1", "sent c1 2 11", "remove c1 3", "sent c1 4 12"), applied);
    }

    @Test
    void aReadWaitsForTheDeleteBeforeIt() {
        redisUp.set(false);
        CompletableFuture<Object> deleted = delete("c1"); // a clean start, while Redis is away
        CompletableFuture<Object> read = read("c1");
        Await.until(Duration.ofSeconds(20), "delete retried", () -> errors.containsKey(ClientLanes.Op.DELETE)
                && errors.get(ClientLanes.Op.DELETE).get() >= 2);
        assertFalse(read.isDone(), "the new session does not read the old queue before it is deleted");
        redisUp.set(true);
        read.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
        assertEquals(3L, deleted.join());
        assertEquals(List.of("delete c1", "read c1"), applied);
    }

    @Test
    void aFailedReadIsNotRetriedAndDoesNotHoldUpLaterOperations() {
        redisUp.set(false);
        CompletableFuture<Object> read = read("c1");
        assertTrue(read.isCompletedExceptionally());
        redisUp.set(true);
        remove("c1", 1).join();
        assertEquals(List.of("remove c1 1"), applied);
        assertEquals(1, errors.get(ClientLanes.Op.READ).get());
    }

    @Test
    void waitingWritesCollapseSoMemoryStaysBounded() {
        redisUp.set(false);
        CompletableFuture<Object> running = remove("c1", 1); // in progress, retrying
        List<CompletableFuture<Object>> waiting = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            waiting.add(sentWith("c1", 2, i)); // the client got entry 2 again and again
        }
        CompletableFuture<Object> removeTwice = remove("c1", 2);
        assertTrue(remove("c1", 2) == removeTwice, "a second remove of one entry shares the first");
        assertEquals(2, lanes.pending(), "the remove in progress and one remove of entry 2");
        waiting.forEach(f -> assertTrue(f.isDone(), "superseded packet identifiers are moot"));

        CompletableFuture<Object> deleted = delete("c1");
        assertTrue(removeTwice.isDone(), "a delete makes waiting writes moot");
        assertEquals(2, lanes.pending(), "the remove in progress (moot at its next retry) and the delete");
        redisUp.set(true);
        deleted.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
        assertTrue(running.isDone());
        assertEquals(List.of("delete c1"), applied, "the moot remove was not applied after all");
        assertEquals(0, lanes.pending());
    }

    @Test
    void oneClientWaitingForRedisDoesNotHoldUpAnother() {
        AtomicBoolean c1Fails = new AtomicBoolean(true);
        CompletableFuture<Object> stuck = lanes.submit("c1", ClientLanes.Op.REMOVE, 1,
                () -> c1Fails.get() ? CompletableFuture.failedFuture(new IllegalStateException("slot moving"))
                        : redis("remove c1 1"));
        remove("c2", 1).join();
        assertEquals(List.of("remove c2 1"), applied);
        assertFalse(stuck.isDone());
        c1Fails.set(false);
        stuck.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
        assertEquals(List.of("remove c2 1", "remove c1 1"), applied);
    }

    @Test
    void withoutARetryTimerAFailedWriteFailsItsFuture() {
        ClientLanes noRetries = new ClientLanes(null, op -> { });
        redisUp.set(false);
        CompletableFuture<Object> f = noRetries.submit("c1", ClientLanes.Op.REMOVE, 1, () -> redis("remove"));
        assertTrue(f.isCompletedExceptionally());
        assertEquals(0, noRetries.pending());
    }

    /** Lanes whose merger records each call, and whose calls wait for {@link #gate} while it is set. */
    private final List<List<String>> mergedCalls = Collections.synchronizedList(new ArrayList<>());
    private volatile CompletableFuture<Object> gate;
    private final ClientLanes merging = new ClientLanes(timer,
            op -> errors.computeIfAbsent(op, o -> new AtomicInteger()).incrementAndGet(), (client, writes) -> {
                attempts.incrementAndGet();
                CompletableFuture<Object> wait = gate;
                if (!redisUp.get()) {
                    return CompletableFuture.failedFuture(new IllegalStateException("Connection refused"));
                }
                List<String> call = new ArrayList<>();
                for (ClientLanes.Write w : writes) {
                    call.add((w.op() == ClientLanes.Op.REMOVE ? "remove " : "sent ") + client + " " + w.seq()
                            + (w.op() == ClientLanes.Op.SENT_WITH ? " " + w.arg() : ""));
                }
                mergedCalls.add(call);
                return wait == null ? CompletableFuture.completedFuture(null) : wait;
            });

    @Test
    void writesWaitingBehindACallGoToRedisTogetherInTheirOrder() {
        gate = new CompletableFuture<>();
        CompletableFuture<Object> first = merging.submitWrite("c1", ClientLanes.Op.SENT_WITH, 1, 11);
        List<CompletableFuture<Object>> waiting = new ArrayList<>();
        waiting.add(merging.submitWrite("c1", ClientLanes.Op.SENT_WITH, 2, 12));
        waiting.add(merging.submitWrite("c1", ClientLanes.Op.REMOVE, 5, 0));
        waiting.add(merging.submitWrite("c1", ClientLanes.Op.SENT_WITH, 3, 13));
        waiting.add(merging.submitWrite("c1", ClientLanes.Op.REMOVE, 6, 0));
        CompletableFuture<Object> read = merging.submit("c1", ClientLanes.Op.READ, 0, () -> redis("read c1"));
        CompletableFuture<Object> after = merging.submitWrite("c1", ClientLanes.Op.REMOVE, 7, 0);
        assertEquals(List.of(List.of("sent c1 1 11")), mergedCalls, "the first write runs alone");
        assertEquals(7, merging.pending());

        CompletableFuture<Object> g = gate;
        gate = null;
        g.complete(null);
        after.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
        assertTrue(first.isDone() && read.isDone());
        waiting.forEach(f -> assertTrue(f.isDone() && !f.isCompletedExceptionally()));
        assertEquals(List.of(List.of("sent c1 1 11"),
                List.of("sent c1 2 12", "remove c1 5", "sent c1 3 13", "remove c1 6"),
                List.of("remove c1 7")), mergedCalls, "a read is not merged over: the writes after it wait for it");
        assertEquals(List.of("read c1"), applied);
        assertEquals(0, merging.pending());
    }

    @Test
    void aMergedCallThatFailsIsRetriedWholeAndADeleteMakesItMoot() {
        gate = new CompletableFuture<>();
        merging.submitWrite("c1", ClientLanes.Op.REMOVE, 1, 0);
        CompletableFuture<Object> a = merging.submitWrite("c1", ClientLanes.Op.REMOVE, 2, 0);
        CompletableFuture<Object> b = merging.submitWrite("c1", ClientLanes.Op.SENT_WITH, 3, 7);
        redisUp.set(false);
        CompletableFuture<Object> g = gate;
        gate = null;
        g.complete(null);
        Await.until(Duration.ofSeconds(20), "the merged call failed twice", () -> errors.containsKey(ClientLanes.Op.REMOVE)
                && errors.get(ClientLanes.Op.REMOVE).get() >= 2);
        assertFalse(a.isDone() || b.isDone(), "not given up on");
        redisUp.set(true);
        b.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
        assertEquals(List.of(List.of("remove c1 1"), List.of("remove c1 2", "sent c1 3 7")), mergedCalls,
                "retried as one call, in order");

        mergedCalls.clear();
        redisUp.set(false);
        CompletableFuture<Object> c = merging.submitWrite("c1", ClientLanes.Op.REMOVE, 4, 0);
        Await.until(Duration.ofSeconds(20), "the remove is retrying", () -> attempts.get() >= 6);
        CompletableFuture<Object> deleted = merging.submit("c1", ClientLanes.Op.DELETE, 0, () -> redis("delete c1"));
        redisUp.set(true);
        deleted.orTimeout(20, java.util.concurrent.TimeUnit.SECONDS).join();
        assertTrue(c.isDone());
        assertEquals(List.of(), mergedCalls, "the moot remove was not applied after all");
        assertEquals(List.of("delete c1"), applied);
        assertEquals(0, merging.pending());
    }
}
