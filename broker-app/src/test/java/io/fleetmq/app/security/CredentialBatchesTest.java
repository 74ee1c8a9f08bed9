package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.Credential;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The batching of user names' credential reads, with a reader standing for PostgreSQL. */
class CredentialBatchesTest {

    private static final long WAIT = TimeUnit.SECONDS.toNanos(5);

    private static Credential credential(String username) {
        return new Credential("id-" + username, Credential.BASIC, username, null, "$2b$10$x", null, List.of(),
                List.of(), Instant.EPOCH, Instant.EPOCH, null, null, false);
    }

    /** Reads every user name but "nobody", recording each batch. */
    private static final class Reader implements java.util.function.Function<List<String>, Map<String, List<Credential>>> {
        final List<List<String>> batches = new CopyOnWriteArrayList<>();

        @Override
        public Map<String, List<Credential>> apply(List<String> names) {
            batches.add(List.copyOf(names));
            Map<String, List<Credential>> read = new HashMap<>();
            for (String n : names) {
                if (!n.equals("nobody")) {
                    read.put(n, List.of(credential(n)));
                }
            }
            return read;
        }
    }

    @Test
    void theUserNamesWantedBeforeAThreadWaitsAreReadInOneQuery() {
        Reader reader = new Reader();
        CredentialBatches.Counts counts = new CredentialBatches.Counts();
        CredentialBatches batches = new CredentialBatches(reader, counts);
        for (int i = 0; i < 300; i++) {
            batches.want("dev-" + i);
        }
        batches.want("dev-7"); // wanted twice, read once
        batches.want("nobody");

        assertEquals(List.of(credential("dev-0")), batches.await("dev-0", WAIT));
        assertEquals(1, reader.batches.size(), "one query for every user name wanted");
        assertEquals(301, reader.batches.get(0).size());
        assertEquals(1, counts.queries().sum());
        assertEquals(301, counts.names().sum());
        // Read already: no longer wanted, so the caller finds them where the reader put them.
        assertNull(batches.await("dev-1", WAIT));
    }

    @Test
    void aUserNameWithoutCredentialsIsReadAsNone() {
        CredentialBatches batches = new CredentialBatches(new Reader(), new CredentialBatches.Counts());
        batches.want("nobody");
        assertEquals(List.of(), batches.await("nobody", WAIT));
        assertNull(batches.await("never-wanted", WAIT), "not wanted: the caller reads it alone");
    }

    @Test
    void manyThreadsWaitingEachGetTheirOwnInFewQueries() throws Exception {
        Reader reader = new Reader();
        CredentialBatches batches = new CredentialBatches(reader, new CredentialBatches.Counts());
        int names = 2_000;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<List<Credential>>> answers = new ArrayList<>();
            for (int i = 0; i < names; i++) {
                String name = "dev-" + i;
                batches.want(name);
                answers.add(pool.submit(() -> batches.await(name, WAIT)));
            }
            int read = 0;
            for (int i = 0; i < names; i++) {
                List<Credential> got = answers.get(i).get(30, TimeUnit.SECONDS);
                if (got != null) { // null: its batch ended before this thread came to wait
                    assertEquals(List.of(credential("dev-" + i)), got);
                    read++;
                }
            }
            assertTrue(read > 0);
            int inBatches = reader.batches.stream().mapToInt(List::size).sum();
            assertEquals(names, inBatches, "every user name read once");
            assertTrue(reader.batches.stream().allMatch(b -> b.size() <= CredentialBatches.MAX_BATCH));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFailedQueryLeavesItsUserNamesToBeReadAlone() {
        CredentialBatches batches = new CredentialBatches(n -> {
            throw new IllegalStateException("PostgreSQL away");
        }, new CredentialBatches.Counts());
        batches.want("dev-1");
        batches.want("dev-2");
        assertNull(batches.await("dev-1", WAIT));
        assertNull(batches.await("dev-2", WAIT), "failed with the same batch");
    }

    @Test
    void aThreadWaitsAtMostItsTimeoutForABatchAnotherThreadReads() throws Exception {
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Reader reader = new Reader();
        CredentialBatches batches = new CredentialBatches(n -> {
            reading.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return reader.apply(n);
        }, new CredentialBatches.Counts());
        batches.want("dev-1");
        Thread slow = new Thread(() -> batches.await("dev-1", WAIT));
        slow.start();
        assertTrue(reading.await(10, TimeUnit.SECONDS));
        batches.want("dev-2");
        assertNull(batches.await("dev-2", TimeUnit.MILLISECONDS.toNanos(50)), "the other thread still reads");
        release.countDown();
        slow.join(10_000);
        assertEquals(List.of(credential("dev-2")), batches.await("dev-2", WAIT), "read by the next batch");
    }
}
