package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.core.security.scram.ScramAlgorithm;
import io.fleetmq.core.security.scram.ScramKeys;
import io.fleetmq.persistence.auth.PasswordHashes;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The auth queue on a real node, one auth thread, a slow (bcrypt cost 12) credential: bounded by the
 * wait it means ({@code auth.max-wait}) rather than by its length alone, and CONNECTs whose clients
 * stopped waiting are dropped from it unchecked.
 */
class AuthQueueTest {

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static int code(SecurityFixture fx, String clientId, String user, String password) {
        try (var c = SecurityFixture.connect(fx.broker().mqttPort(), 5, clientId, user, password)) {
            return c.code();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A credential whose every check holds the auth thread for a bcrypt hash of cost 12. */
    private static String slowCredential(SecurityFixture fx) {
        String user = unique("slow");
        Credential slow = fx.credentials.create(new Credentials.Input(Credential.BASIC, user, null,
                new PasswordHashes(12, 14, 100_000).hash("secret".toCharArray()), null, List.of(), List.of()));
        fx.announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, slow.id(), false, false));
        return user;
    }

    /** {@code clients} CONNECTs with wrong passwords at once; their CONNACK codes, counted. */
    private static Map<Integer, Integer> storm(SecurityFixture fx, String user, int clients) throws Exception {
        ExecutorService storm = Executors.newFixedThreadPool(clients);
        Map<Integer, Integer> codes = new ConcurrentHashMap<>();
        List<Future<?>> attempts = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                int n = i;
                attempts.add(storm.submit(() -> codes.merge(code(fx, unique("s" + n), user, "guess-" + n), 1,
                        Integer::sum)));
            }
            for (Future<?> f : attempts) {
                f.get(2, TimeUnit.MINUTES);
            }
        } finally {
            storm.shutdownNow();
        }
        assertEquals(clients, codes.values().stream().mapToInt(Integer::intValue).sum());
        return codes;
    }

    @Test
    @DisplayName("Slow checks: beyond auth.max-wait of expected work a CONNECT gets 0x89 at once, though the queue is far from auth.max-pending")
    void theQueueIsBoundedByTheWaitItMeans(@TempDir Path dir) throws Exception {
        try (SecurityFixture fx = SecurityFixture.startNode(dir, Map.of("MQTT_AUTH_THREADS", "1",
                "MQTT_AUTH_MAX_PENDING", "1000", "MQTT_AUTH_MAX_WAIT", "1s"))) {
            String user = slowCredential(fx);
            assertEquals(0x86, code(fx, unique("v"), user, "guess"), "one check: the node learns what one costs");

            Map<Integer, Integer> codes = storm(fx, user, 30);

            assertTrue(codes.keySet().stream().allMatch(c -> c == 0x86 || c == 0x89), "only 0x86 and 0x89: " + codes);
            assertTrue(codes.getOrDefault(0x89, 0) > 0, "some refused as busy: " + codes);
            assertTrue(codes.getOrDefault(0x86, 0) > 0, "some checked: " + codes);
            assertTrue(fx.broker().metric("fleetmq_connections_refused_total", "reason=\"auth_busy\"")
                    >= codes.get(0x89), "busy refusals counted");
        }
    }

    @Test
    @DisplayName("CONNECTs that timed out in the auth queue are dropped from it unchecked: a client after the storm is served at once")
    void connectsWhoseClientsStoppedWaitingAreNotChecked(@TempDir Path dir) throws Exception {
        try (SecurityFixture fx = SecurityFixture.startNode(dir, Map.of("MQTT_AUTH_THREADS", "1",
                "MQTT_AUTH_MAX_PENDING", "1000", "MQTT_AUTH_MAX_WAIT", "0", "CLUSTER_CONNECT_TIMEOUT", "2s"))) {
            String user = slowCredential(fx);
            String good = unique("good");
            fx.credential(good, null, "right", List.of(), List.of());

            // 24 hashes of cost 12 take the one thread several times the 2 s the CONNECTs wait.
            Map<Integer, Integer> codes = storm(fx, user, 24);

            assertTrue(codes.keySet().stream().allMatch(c -> c == 0x86 || c == 0x88), "only 0x86 and 0x88: " + codes);
            assertTrue(codes.getOrDefault(0x88, 0) > 0, "some timed out waiting: " + codes);
            // Its credential is read on the auth thread too: behind the timed-out CONNECTs' hashes, were
            // they still checked, it would time out as well.
            assertEquals(0x00, code(fx, unique("g"), good, "right"), "a client after the storm");
            assertTrue(fx.broker().metric("fleetmq_auth_abandoned_total", null) > 0, "dropped unchecked, counted");
        }
    }

    @Test
    @DisplayName("CONNECTs whose clients hung up while they waited in the auth queue are dropped from it unchecked")
    void connectsWhoseConnectionsClosedAreNotChecked(@TempDir Path dir) throws Exception {
        try (SecurityFixture fx = SecurityFixture.startNode(dir, Map.of("MQTT_AUTH_THREADS", "1",
                "MQTT_AUTH_MAX_PENDING", "1000", "MQTT_AUTH_MAX_WAIT", "0", "CLUSTER_CONNECT_TIMEOUT", "4s"))) {
            String user = slowCredential(fx);
            String good = unique("good");
            fx.credential(good, null, "right", List.of(), List.of());
            double abandonedBefore = fx.broker().metric("fleetmq_auth_abandoned_total", null);

            // 24 clients send a CONNECT whose check is a hash of cost 12 and hang up at once.
            for (int i = 0; i < 24; i++) {
                try (RawMqtt raw = RawMqtt.connect(fx.broker().mqttPort())) {
                    raw.send(RawMqtt.connectWithCredentials(5, unique("gone" + i), user,
                            ("guess-" + i).getBytes(StandardCharsets.UTF_8)));
                }
            }

            // Behind their hashes, were they still checked, this CONNECT would wait past the 4 s.
            assertEquals(0x00, code(fx, unique("g"), good, "right"), "a client behind the ones that left");
            Await.until(Duration.ofSeconds(20), "the CONNECTs of closed connections dropped unchecked",
                    () -> fx.broker().metric("fleetmq_auth_abandoned_total", null) - abandonedBefore >= 20);
        }
    }

    /** A connection through the SCRAM-SHA-256 exchange as {@code user}, up to the CONNACK (left to read). */
    private static RawMqtt scramConnect(SecurityFixture fx, String user, String clientId) throws Exception {
        ScramClient client = new ScramClient("SHA-256", user, "pw");
        RawMqtt raw = RawMqtt.connect(fx.broker().mqttPort());
        raw.send(client.connect(clientId));
        ScramClient.Auth serverFirst = ScramClient.readAuth(raw);
        assertEquals(0x18, serverFirst.reason(), "AUTH 0x18 Continue authentication");
        raw.send(ScramClient.auth(0x18, client.method(), client.clientFinal(serverFirst.data())));
        return raw;
    }

    /** A SCRAM-SHA-256 credential for {@code user}, announced to the node. */
    private static void scramCredential(SecurityFixture fx, String user) {
        Credential c = fx.credentials.create(new Credentials.Input(Credential.SCRAM, user, null, null, null,
                List.of(), List.of(), ScramKeys.derive(ScramAlgorithm.ofApiName("SHA-256"), "pw".toCharArray())));
        fx.announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, c.id(), false, false));
    }

    @Test
    @DisplayName("SCRAM exchanges share the auth queue's bound: beyond auth.max-wait of expected work a SCRAM CONNECT gets 0x89 as a password's does")
    void scramExchangesAreBoundedAsPasswordChecksAre(@TempDir Path dir) throws Exception {
        try (SecurityFixture fx = SecurityFixture.startNode(dir, Map.of("MQTT_AUTH_THREADS", "1",
                "MQTT_AUTH_MAX_WAIT", "50ms", "AUTH_PROVIDERS", "basic,scram"))) {
            String slow = slowCredential(fx);
            String user = unique("scram");
            scramCredential(fx, user);
            // Connected while the node is idle: a SCRAM read is quick.
            try (RawMqtt connected = scramConnect(fx, user, unique("early"))) {
                assertEquals(0x00, RawMqtt.parseConnAckV5(connected.readType(2)).reasonCode());

                // A check of cost 12 teaches the node that a CONNECT holds its one auth thread far longer than 50 ms.
                assertEquals(0x86, code(fx, unique("v"), slow, "guess"));

                try (RawMqtt raw = RawMqtt.connect(fx.broker().mqttPort())) {
                    raw.send(new ScramClient("SHA-256", user, "pw").connect(unique("s")));
                    byte[] answer = raw.read();
                    assertEquals(0x20, answer[0] & 0xF0, "CONNACK at once, no AUTH exchange");
                    assertEquals(0x89, answer[3] & 0xFF, "Server busy");
                }
                assertTrue(fx.broker().metric("fleetmq_connections_refused_total", "reason=\"auth_busy\"") >= 1,
                        "counted as the busy refusal it is");

                // A connection that works is not ended for that bound: its re-authentication goes through.
                ScramClient again = new ScramClient("SHA-256", user, "pw");
                connected.send(ScramClient.auth(0x19, again.method(), again.clientFirst()));
                ScramClient.Auth serverFirst = ScramClient.readAuth(connected);
                assertEquals(0x18, serverFirst.reason(), "AUTH 0x18, not DISCONNECT 0x89");
                connected.send(ScramClient.auth(0x18, again.method(), again.clientFinal(serverFirst.data())));
                assertEquals(0x00, ScramClient.readAuth(connected).reason(), "re-authenticated");
            }
        }
    }

    @Test
    @DisplayName("A SCRAM CONNECT whose client hung up while it waited in the auth queue is dropped from it unchecked")
    void scramConnectsWhoseConnectionsClosedAreNotChecked(@TempDir Path dir) throws Exception {
        try (SecurityFixture fx = SecurityFixture.startNode(dir, Map.of("MQTT_AUTH_THREADS", "1",
                "MQTT_AUTH_MAX_WAIT", "0", "AUTH_PROVIDERS", "basic,scram"))) {
            String slow = slowCredential(fx);
            String user = unique("scram");
            scramCredential(fx, user);
            double abandonedBefore = fx.broker().metric("fleetmq_auth_abandoned_total", null);
            List<RawMqtt> waiting = new ArrayList<>();
            try {
                // Three hashes of cost 12 hold the one auth thread; their clients keep waiting.
                for (int i = 0; i < 3; i++) {
                    RawMqtt raw = RawMqtt.connect(fx.broker().mqttPort());
                    waiting.add(raw);
                    raw.send(RawMqtt.connectWithCredentials(5, unique("w" + i), slow,
                            ("guess-" + i).getBytes(StandardCharsets.UTF_8)));
                }
                // Behind them, a SCRAM CONNECT whose client hangs up at once.
                try (RawMqtt raw = RawMqtt.connect(fx.broker().mqttPort())) {
                    raw.send(new ScramClient("SHA-256", user, "pw").connect(unique("s")));
                }
                Await.until(Duration.ofSeconds(20), "the SCRAM step of a closed connection skipped, counted",
                        () -> fx.broker().metric("fleetmq_auth_abandoned_total", null) - abandonedBefore >= 1);
                for (RawMqtt raw : waiting) {
                    assertEquals(0x86, RawMqtt.parseConnAckV5(raw.readType(2)).reasonCode(), "the waiting ones checked");
                }
            } finally {
                for (RawMqtt raw : waiting) {
                    raw.close();
                }
            }
        }
    }
}
