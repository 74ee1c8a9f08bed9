package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.Credential;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user name's credentials are read once for all its client IDs while no credential matches by
 * client ID alone; what a CONNECT may match stays as it was: a credential naming the client ID
 * first, then the one naming none, and, once a credential by client ID alone exists, that one too.
 * Changes are seen at once.
 */
class CredentialLookupTest {

    @TempDir
    static Path dataDir;
    static SecurityFixture fx;

    @BeforeAll
    static void start() {
        fx = SecurityFixture.startNode(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        if (fx != null) {
            fx.close();
        }
    }

    private static void expect(String clientId, String username, String password, int code) throws Exception {
        SecurityFixture.connect(fx.broker().mqttPort(), 5, clientId, username, password).expect(code).close();
    }

    @Test
    void aFleetsUserNameMatchesEveryClientIdAndCredentialsNamingOneOnlyThatOne() throws Exception {
        Credential shared = fx.credential("fleet", null, "fleet-pw", List.of(), List.of());
        fx.credential("fleet", "dev-special", "special-pw", List.of(), List.of());
        expect("dev-1", "fleet", "fleet-pw", 0x00);
        expect("dev-2", "fleet", "fleet-pw", 0x00); // from what was read for dev-1
        expect("dev-1", "fleet", "special-pw", 0x86);
        expect("dev-special", "fleet", "special-pw", 0x00);
        expect("dev-special", "fleet", "fleet-pw", 0x00); // the credential naming none comes next
        expect("dev-1", "other", "fleet-pw", 0x86);

        // A credential made for one more client ID of the user name is seen at once.
        fx.credential("fleet", "dev-3", "dev-3-pw", List.of(), List.of());
        expect("dev-3", "fleet", "dev-3-pw", 0x00);
        expect("dev-2", "fleet", "dev-3-pw", 0x86);

        // One by client ID alone: a CONNECT with that client ID may match it after the user name's.
        Credential solo = fx.credential(null, "dev-solo", "solo-pw", List.of(), List.of());
        expect("dev-solo", "fleet", "solo-pw", 0x00);
        expect("dev-solo", "fleet", "fleet-pw", 0x00);
        expect("dev-4", "fleet", "solo-pw", 0x86);

        fx.delete(shared);
        expect("dev-1", "fleet", "fleet-pw", 0x86);
        expect("dev-3", "fleet", "dev-3-pw", 0x00);

        // Given a user name, it no longer matches by client ID alone: user names' lists are complete
        // once more (the other test relies on it), as a read of PostgreSQL after the change found.
        fx.rename(solo, "solo-user");
        expect("dev-solo", "fleet", "solo-pw", 0x86);
        expect("dev-solo", "solo-user", "solo-pw", 0x00);
        expect("dev-5", "solo-user", "solo-pw", 0x86);
    }

    private static double metric(String name) {
        return fx.broker().metric(name, null);
    }

    /** Needs user names' lists in use: no credential by client ID alone, as the test above leaves it. */
    @Test
    void devicesWithUserNamesOfTheirOwnConnectingAtOnceHaveTheirCredentialsReadInBatches() throws Exception {
        int devices = 60;
        for (int i = 0; i < devices; i++) {
            fx.credential("own-" + i, null, "own-pw-" + i, List.of(), List.of());
        }
        double names = metric("fleetmq_auth_credential_batched_usernames_total");
        double queries = metric("fleetmq_auth_credential_batches_total");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(devices);
        try {
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            List<java.util.concurrent.Future<Integer>> codes = new java.util.ArrayList<>();
            for (int i = 0; i < devices; i++) {
                int n = i;
                codes.add(pool.submit(() -> {
                    go.await();
                    // Every other device sends its neighbour's password: refused, from the same batches.
                    String password = n % 10 == 9 ? "own-pw-" + (n - 1) : "own-pw-" + n;
                    try (SecurityFixture.Connected c = SecurityFixture.connect(fx.broker().mqttPort(), 5, "own-dev-" + n,
                            "own-" + n, password)) {
                        return c.code();
                    }
                }));
            }
            go.countDown();
            for (int i = 0; i < devices; i++) {
                assertEquals(i % 10 == 9 ? 0x86 : 0x00, codes.get(i).get(30, java.util.concurrent.TimeUnit.SECONDS),
                        "device " + i);
            }
        } finally {
            pool.shutdownNow();
        }
        io.fleetmq.testkit.Await.until(java.time.Duration.ofSeconds(10), "every user name read in a batch",
                () -> metric("fleetmq_auth_credential_batched_usernames_total") - names == devices);
        assertTrue(metric("fleetmq_auth_credential_batches_total") - queries >= 1);
        // Kept as read: a device's next CONNECT needs no read at all.
        expect("own-dev-0", "own-0", "own-pw-0", 0x00);
        assertEquals(devices, metric("fleetmq_auth_credential_batched_usernames_total") - names);
    }
}
