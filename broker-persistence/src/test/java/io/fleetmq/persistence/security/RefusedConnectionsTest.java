package io.fleetmq.persistence.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.Page;
import io.fleetmq.core.security.RefusedConnection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the embedded PostgreSQL of the test kit, in a schema of its own per test. */
class RefusedConnectionsTest {

    private static final Instant T0 = Instant.parse("2026-06-01T12:00:00Z");

    private SecuritySchema schema;
    private RefusedConnections refused;

    @BeforeEach
    void open() {
        schema = new SecuritySchema();
        refused = new RefusedConnections(schema.dataSource());
    }

    @AfterEach
    void close() {
        schema.close();
    }

    private static RefusedConnection entry(String clientId, String username, String address, String reason,
            long firstSecond, long lastSecond, long count) {
        return new RefusedConnection(clientId, username, address, username != null, false, reason,
                T0.plusSeconds(firstSecond), T0.plusSeconds(lastSecond), count);
    }

    private RefusedConnection only(String clientId) {
        List<RefusedConnection> rows = refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 100)
                .items().stream().filter(r -> r.clientId().equals(clientId)).toList();
        assertEquals(1, rows.size(), rows.toString());
        return rows.get(0);
    }

    private static List<String> clientIds(Page<RefusedConnection> page) {
        return page.items().stream().map(RefusedConnection::clientId).toList();
    }

    @Test
    void aFirstBatchCreatesOneRowPerClientId() {
        RefusedConnection first = entry("dev-1", "alice", "10.0.0.1", RefusedConnection.BAD_CREDENTIALS, 0, 5, 3);
        RefusedConnection tls = new RefusedConnection("", null, "10.0.0.2", false, true,
                RefusedConnection.ANONYMOUS_REFUSED, T0, T0, 1);
        refused.record(List.of(first, tls));

        assertEquals(first, only("dev-1"));
        assertEquals(tls, only(""));
        assertEquals(2, refused.list(RefusedConnections.Filter.NONE, 0, 10).total());
    }

    @Test
    void laterBatchesAddTheCountKeepTheFirstAndTakeTheNewestDetails() {
        refused.record(List.of(entry("dev-1", "alice", "10.0.0.1", RefusedConnection.BAD_CREDENTIALS, 10, 20, 2)));
        // Newer: its details win, the first refusal stays.
        refused.record(List.of(entry("dev-1", "bob", "10.0.0.2", RefusedConnection.BLOCKED, 15, 30, 5)));
        RefusedConnection row = only("dev-1");
        assertEquals(7, row.count());
        assertEquals(T0.plusSeconds(10), row.firstAt());
        assertEquals(T0.plusSeconds(30), row.lastAt());
        assertEquals("bob", row.username());
        assertEquals("10.0.0.2", row.address());
        assertEquals(RefusedConnection.BLOCKED, row.reason());

        // Older, from a node that wrote late: it counts and may move the first refusal back, nothing else.
        refused.record(List.of(new RefusedConnection("dev-1", null, "10.0.0.3", false, true,
                RefusedConnection.AUTH_UNAVAILABLE, T0.plusSeconds(1), T0.plusSeconds(25), 4)));
        row = only("dev-1");
        assertEquals(11, row.count());
        assertEquals(T0.plusSeconds(1), row.firstAt());
        assertEquals(T0.plusSeconds(30), row.lastAt());
        assertEquals("bob", row.username());
        assertEquals("10.0.0.2", row.address());
        assertEquals(true, row.passwordGiven());
        assertEquals(false, row.tls());
        assertEquals(RefusedConnection.BLOCKED, row.reason());
    }

    @Test
    void oneBatchMayHoldTheSameClientIdTwice() {
        refused.record(List.of(
                entry("dev-1", "newer", "10.0.0.1", RefusedConnection.BLOCKED, 5, 50, 1),
                entry("dev-2", "x", "10.0.0.9", RefusedConnection.BLOCKED, 5, 6, 1),
                entry("dev-1", "older", "10.0.0.1", RefusedConnection.BAD_CREDENTIALS, 2, 40, 2)));
        RefusedConnection row = only("dev-1");
        assertEquals(3, row.count());
        assertEquals(T0.plusSeconds(2), row.firstAt());
        assertEquals(T0.plusSeconds(50), row.lastAt());
        assertEquals("newer", row.username());
    }

    @Test
    void anEntryWithoutFirstRefusalStartsAtItsLast() {
        refused.record(List.of(new RefusedConnection("dev-1", null, "10.0.0.1", false, false,
                RefusedConnection.NOT_AUTHORIZED, null, T0, 1)));
        assertEquals(T0, only("dev-1").firstAt());
    }

    @Test
    void aBadEntryWritesNothingOfItsBatch() {
        RefusedConnection good = entry("dev-1", "alice", "10.0.0.1", RefusedConnection.BLOCKED, 0, 1, 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> refused.record(List.of(good,
                new RefusedConnection(null, null, "10.0.0.1", false, false, RefusedConnection.BLOCKED, T0, T0, 1))));
        assertTrue(e.getMessage().startsWith("clientId"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> refused.record(List.of(good,
                entry("dev-2", null, "10.0.0.1", RefusedConnection.BLOCKED, 0, 1, 0))));
        assertEquals(0, refused.list(RefusedConnections.Filter.NONE, 0, 10).total());
        refused.record(List.of());
        refused.record(null);
        assertEquals(0, refused.list(RefusedConnections.Filter.NONE, 0, 10).total());
    }

    @Test
    void nodesWritingOverlappingBatchesAtOnceLoseNoCount() throws Exception {
        int nodes = 4;
        int rounds = 20;
        ExecutorService pool = Executors.newFixedThreadPool(nodes);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int n = 0; n < nodes; n++) {
                boolean reversed = n % 2 == 1;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        List<RefusedConnection> batch = new ArrayList<>();
                        for (int c = 0; c < 10; c++) {
                            batch.add(entry("dev-" + c, "u", "10.0.0.1", RefusedConnection.BLOCKED, r, r, 1));
                        }
                        if (reversed) {
                            Collections.reverse(batch);
                        }
                        refused.record(batch);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        Page<RefusedConnection> all = refused.list(RefusedConnections.Filter.NONE, 0, 100);
        assertEquals(10, all.total());
        for (RefusedConnection row : all.items()) {
            assertEquals(nodes * rounds, row.count(), row.clientId());
            assertEquals(T0, row.firstAt());
            assertEquals(T0.plusSeconds(rounds - 1), row.lastAt());
        }
    }

    @Test
    void listsLatestFirstWithFiltersAndPages() {
        refused.record(List.of(
                entry("sensor-1", "Alice", "10.0.0.1", RefusedConnection.BAD_CREDENTIALS, 0, 10, 1),
                entry("sensor-2", null, "192.168.1.7", RefusedConnection.BLOCKED, 0, 30, 1),
                entry("app_1", "bob", "10.0.0.2", RefusedConnection.BAD_CREDENTIALS, 0, 20, 1),
                entry("SENSOR-3", "alice", "10.0.0.3", RefusedConnection.AUTH_BUSY, 0, 40, 1)));

        Page<RefusedConnection> all = refused.list(null, 0, 10);
        assertEquals(List.of("SENSOR-3", "sensor-2", "app_1", "sensor-1"), clientIds(all));
        Page<RefusedConnection> second = refused.list(RefusedConnections.Filter.NONE, 1, 3);
        assertEquals(4, second.total());
        assertEquals(List.of("sensor-1"), clientIds(second));

        assertEquals(List.of("SENSOR-3", "sensor-2", "sensor-1"),
                clientIds(refused.list(new RefusedConnections.Filter("sensor", null, null, null), 0, 10)));
        assertEquals(List.of("SENSOR-3", "sensor-1"),
                clientIds(refused.list(new RefusedConnections.Filter(null, "ALI", null, null), 0, 10)));
        assertEquals(List.of("SENSOR-3", "app_1", "sensor-1"),
                clientIds(refused.list(new RefusedConnections.Filter(null, null, "10.0.0.", null), 0, 10)));
        assertEquals(List.of("app_1", "sensor-1"), clientIds(refused.list(
                new RefusedConnections.Filter(null, null, null, RefusedConnection.BAD_CREDENTIALS), 0, 10)));
        Page<RefusedConnection> combined = refused.list(
                new RefusedConnections.Filter("sensor", null, "10.", RefusedConnection.BAD_CREDENTIALS), 0, 10);
        assertEquals(1, combined.total());
        assertEquals(List.of("sensor-1"), clientIds(combined));
        assertEquals(List.of("app_1"),
                clientIds(refused.list(new RefusedConnections.Filter("_", null, null, null), 0, 10)));
    }

    @Test
    void purgeDeletesRowsWhoseLatestRefusalIsOlder() {
        refused.record(List.of(
                entry("old", null, "10.0.0.1", RefusedConnection.BLOCKED, 0, 10, 1),
                entry("edge", null, "10.0.0.1", RefusedConnection.BLOCKED, 0, 20, 1),
                entry("new", null, "10.0.0.1", RefusedConnection.BLOCKED, 0, 30, 1)));
        assertEquals(0, refused.purgeBefore(T0));
        assertEquals(1, refused.purgeBefore(T0.plusSeconds(20)));
        assertEquals(List.of("new", "edge"), clientIds(refused.list(RefusedConnections.Filter.NONE, 0, 10)));
        assertEquals(2, refused.purgeBefore(T0.plusSeconds(31)));
        assertEquals(0, refused.list(RefusedConnections.Filter.NONE, 0, 10).total());
    }
}
