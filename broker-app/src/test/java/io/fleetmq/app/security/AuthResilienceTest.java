package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.persistence.auth.PasswordHashes;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.testkit.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Authentication under stress: a storm of CONNECTs with bad passwords beyond the bounded pool, and
 * PostgreSQL cut off (the node reaches it through a proxy) while clients connect with cached and
 * uncached credentials. The node also runs with the deny action "disconnect".
 */
class AuthResilienceTest {

    @TempDir
    static Path dataDir;
    static PrivateDatabase db;
    static TcpProxy proxy;
    static TestBroker broker;
    static SecurityFixture fx;

    @BeforeAll
    static void start() throws IOException {
        db = PrivateDatabase.create();
        Matcher m = Pattern.compile("^jdbc:postgresql://([^/:]+):(\\d+)(/.*)$").matcher(db.url());
        assertTrue(m.matches(), db.url());
        proxy = TcpProxy.start(m.group(1), Integer.parseInt(m.group(2)));
        Map<String, String> env = new HashMap<>(db.env());
        env.put("DATABASE_URL", "jdbc:postgresql://127.0.0.1:" + proxy.port() + m.group(3));
        env.put("DATABASE_CONNECT_TIMEOUT", "2s");
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("MQTT_AUTH_THREADS", "1");
        env.put("MQTT_AUTH_MAX_PENDING", "4");
        env.put("MQTT_DENY_ACTION", "disconnect");
        broker = TestBroker.start(dataDir, env);
        fx = new SecurityFixture(db, broker);
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static int code(String clientId, String user, String password) {
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, clientId, user, password)) {
            return c.code();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    @DisplayName("A storm of CONNECTs with bad passwords beyond the pool gets 0x89, counted, while clients that connected recently keep connecting")
    void connectStorm() throws Exception {
        String good = unique("good");
        fx.credential(good, null, "right", List.of(), List.of());
        String goodId = unique("g");
        assertEquals(0x00, code(goodId, good, "right"), "first CONNECT: checked and remembered");
        String victim = unique("victim");
        // A slow hash (cost 12) makes every wrong guess cost the one auth thread real time.
        Credential slow = fx.credentials.create(new Credentials.Input(Credential.BASIC, victim, null,
                new PasswordHashes(12, 14, 100_000).hash("secret".toCharArray()), null, List.of(), List.of()));
        fx.announce(new SecurityChange(SecurityChange.Kind.CREDENTIAL, slow.id(), false, false));
        assertEquals(0x86, code(unique("v"), victim, "guess"));
        double busyBefore = refusedTotal("auth_busy");

        ExecutorService storm = Executors.newFixedThreadPool(40);
        Map<Integer, Integer> codes = new ConcurrentHashMap<>();
        List<Future<?>> attempts = new ArrayList<>();
        try {
            for (int i = 0; i < 120; i++) {
                int n = i;
                attempts.add(storm.submit(() -> codes.merge(code("storm-" + n, victim, "guess-" + n), 1, Integer::sum)));
            }
            // Meanwhile the good client (a device with its client ID) reconnects, again and again: never behind the storm.
            for (int i = 0; i < 20; i++) {
                assertEquals(0x00, code(goodId, good, "right"), "good client during the storm, attempt " + i);
            }
            for (Future<?> f : attempts) {
                f.get(2, TimeUnit.MINUTES);
            }
        } finally {
            storm.shutdownNow();
        }
        assertEquals(120, codes.values().stream().mapToInt(Integer::intValue).sum());
        assertTrue(codes.keySet().stream().allMatch(c -> c == 0x86 || c == 0x89), "only 0x86 and 0x89: " + codes);
        assertTrue(codes.getOrDefault(0x89, 0) > 0, "some refused as busy: " + codes);
        assertTrue(refusedTotal("auth_busy") >= busyBefore + codes.get(0x89), "busy refusals counted");
        assertEquals(0x00, code(unique("g"), good, "right"), "after the storm");
    }

    @Test
    @DisplayName("PostgreSQL away: a client whose credential the node has cached connects, others get 0x88 (counted); back, they connect")
    void postgresAway() throws Exception {
        String cached = unique("cached");
        String uncached = unique("uncached");
        fx.credential(cached, null, "pw", List.of(), List.of());
        fx.credential(uncached, null, "pw", List.of(), List.of());
        String cachedId = unique("c");
        assertEquals(0x00, code(cachedId, cached, "pw"));
        double before = refusedTotal("auth_unavailable");
        proxy.cut();
        try {
            assertEquals(0x00, code(cachedId, cached, "pw"), "cached credential with PostgreSQL away");
            assertEquals(0x88, code(unique("u"), uncached, "pw"), "uncached credential with PostgreSQL away");
            assertTrue(broker.isReady(), "the node stays ready");
        } finally {
            proxy.restore();
        }
        assertTrue(refusedTotal("auth_unavailable") >= before + 1);
        io.fleetmq.testkit.Await.until(java.time.Duration.ofSeconds(20), "PostgreSQL back",
                () -> code(unique("u"), uncached, "pw") == 0x00);
    }

    @Test
    @DisplayName("Deny action disconnect: a PUBLISH the client may not send ends its connection (MQTT 5: DISCONNECT 0x87; 3.1.1: closed), counted")
    void denyActionDisconnect() throws Exception {
        String user = unique("deny");
        fx.credential(user, null, "pw", List.of("allowed/#"), List.of());
        double before = broker.dropped("not_authorized");
        try (var v5 = SecurityFixture.connect(broker.mqttPort(), 5, unique("d"), user, "pw").expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(v5.raw(), 1, "allowed/x", "ok"));
            v5.raw().send(io.fleetmq.testkit.RawMqtt.publishV5("forbidden/x", 1, 2, new byte[] {1}));
            byte[] disconnect = v5.raw().readType(14);
            assertEquals(0x87, disconnect[2] & 0xFF);
        }
        try (var v3 = SecurityFixture.connect(broker.mqttPort(), 4, unique("d"), user, "pw").expect(0)) {
            v3.raw().send(io.fleetmq.testkit.RawMqtt.packet(0x30, topicAndPayload("forbidden/y")));
            assertTrue(v3.raw().closedByBroker(), "3.1.1 connection closed");
        }
        assertEquals(before + 2, broker.dropped("not_authorized"));
    }

    private static byte[] topicAndPayload(String topic) {
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        io.fleetmq.testkit.RawMqtt.writeString(body, topic);
        body.write('x');
        return body.toByteArray();
    }

    private static double refusedTotal(String reason) {
        Matcher m = Pattern.compile("^fleetmq_connections_refused_total\\{[^}]*reason=\"" + reason
                + "\"[^}]*\\} (\\S+)$", Pattern.MULTILINE).matcher(broker.scrapeMetrics());
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }
}
