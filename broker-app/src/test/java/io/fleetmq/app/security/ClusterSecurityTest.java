package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.Credential;
import io.fleetmq.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two nodes of one cluster: a change written through one node reaches the clients connected to the
 * other within a second or so (rules, a deleted credential, a block, the authentication settings).
 */
class ClusterSecurityTest {

    @TempDir
    static Path dir;
    static io.fleetmq.app.support.TwoNodes nodes;
    static PrivateDatabase db;
    static TestBroker first;
    static TestBroker second;
    static SecurityFixture viaFirst;
    static String adminToken;
    static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    @BeforeAll
    static void start() {
        nodes = io.fleetmq.app.support.TwoNodes.start(dir, "sec", Map.of("MQTT_ALLOW_ANONYMOUS", "false"));
        db = nodes.db;
        first = nodes.first;
        second = nodes.second;
        adminToken = nodes.token;
        viaFirst = new SecurityFixture(db, first);
    }

    @AfterAll
    static void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Connects to the second node once it has learnt of the credential made through the first. */
    private static SecurityFixture.Connected connectToSecond(String clientId, String user) {
        SecurityFixture.Connected[] connected = new SecurityFixture.Connected[1];
        Await.until(Duration.ofSeconds(10), "the credential known on the second node", () -> {
            try {
                SecurityFixture.Connected c = SecurityFixture.connect(second.mqttPort(), 5, clientId, user, "pw");
                if (c.code() == 0x00) {
                    connected[0] = c;
                    return true;
                }
                c.close();
                return false;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        return connected[0];
    }

    @Test
    @DisplayName("A rule change and a credential deletion made on one node reach a client connected to the other")
    void rulesAndDeletionAcrossNodes() throws Exception {
        String user = unique("x");
        String base = unique("x");
        Credential cred = viaFirst.credential(user, null, "pw", List.of(base + "/#"), List.of());
        try (var c = connectToSecond(unique("x"), user)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, base + "/a", "1"));
            viaFirst.update(cred, List.of(base + "/b"), List.of());
            int[] id = {2};
            Await.until(Duration.ofSeconds(10), "the new rules on the other node", () -> {
                try {
                    return SecurityFixture.publishQos1V5(c.raw(), id[0]++, base + "/a", "2") == 0x87;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 100, base + "/b", "3"));
            viaFirst.delete(cred);
            byte[] disconnect = c.raw().readType(14);
            assertEquals(0x87, disconnect[2] & 0xFF, "DISCONNECT 0x87 from the other node");
        }
    }

    @Test
    @DisplayName("Blocking a client connected to the other node disconnects it there and refuses it on both")
    void blockAcrossNodes() throws Exception {
        String user = unique("y");
        viaFirst.credential(user, null, "pw", List.of(), List.of());
        String clientId = unique("y");
        try (var c = connectToSecond(clientId, user)) {
            BlockEntry e = viaFirst.block(BlockEntry.CLIENT_ID, clientId, null, null);
            byte[] disconnect = c.raw().readType(14);
            assertEquals(0x98, disconnect[2] & 0xFF);
            SecurityFixture.connect(second.mqttPort(), 5, clientId, user, "pw").expect(0x8A).close();
            SecurityFixture.connect(first.mqttPort(), 5, clientId, user, "pw").expect(0x8A).close();
            viaFirst.unblock(e);
        }
    }

    // ------------------------------------------------------------------ authentication settings at runtime

    static final String SECRET = "cluster-settings-secret-0123456789abcdefghij";

    private static java.net.http.HttpResponse<String> settings(TestBroker node, String method, String body) {
        return io.fleetmq.app.support.AdminHttp.send(node.node().httpPort(), adminToken, method,
                "/api/v1/auth/settings", body);
    }

    private static String token(String clientId) throws Exception {
        var claims = new com.nimbusds.jwt.JWTClaimsSet.Builder().subject(clientId)
                .expirationTime(java.util.Date.from(java.time.Instant.now().plusSeconds(3600))).build();
        var jwt = new com.nimbusds.jwt.SignedJWT(new com.nimbusds.jose.JWSHeader(com.nimbusds.jose.JWSAlgorithm.HS256),
                claims);
        jwt.sign(new com.nimbusds.jose.crypto.MACSigner(SECRET.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        return jwt.serialize();
    }

    /** The CONNACK code a token client gets from {@code node}. */
    private static int tokenConnect(TestBroker node, String clientId) {
        try (var c = SecurityFixture.connect(node.mqttPort(), 5, clientId, "token-user", token(clientId))) {
            return c.code();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void awaitTokenAnswer(TestBroker node, String which, int code) {
        Await.until(Duration.ofSeconds(15), "CONNACK " + code + " for a token on the " + which + " node",
                () -> tokenConnect(node, unique("tok")) == code);
    }

    private static com.fasterxml.jackson.databind.JsonNode setting(String body, String key) throws IOException {
        for (var s : JSON.readTree(body).get("settings")) {
            if (s.get("key").asText().equals(key)) {
                return s;
            }
        }
        throw new AssertionError("no setting " + key + " in " + body);
    }

    private static double rejectedSettings(TestBroker node) {
        var m = java.util.regex.Pattern.compile("^fleetmq_security_settings_rejected_total(?:\\{[^}]*\\})? (\\S+)$",
                java.util.regex.Pattern.MULTILINE).matcher(node.scrapeMetrics());
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    @Test
    @DisplayName("Provider order and settings changed through the admin API apply on every node without a restart;"
            + " bad changes get a 400 naming the setting; a node that cannot apply stored ones still starts")
    void authSettingsAtRuntime() throws Exception {
        try {
            assertEquals(0x86, tokenConnect(second, unique("tok")), "basic only: a token is a wrong password");

            var changed = settings(first, "PUT",
                    "{\"settings\":{\"AUTH_PROVIDERS\":\"basic,jwt\",\"AUTH_JWT_HMAC_SECRET\":\"" + SECRET + "\"}}");
            assertEquals(200, changed.statusCode(), changed.body());
            assertEquals(List.of("basic", "jwt"), JSON.convertValue(JSON.readTree(changed.body()).get("providers"),
                    List.class));
            var secret = setting(changed.body(), "auth.jwt.hmac-secret");
            assertTrue(secret.get("value").isNull(), "a secret is never shown: " + secret);
            assertTrue(secret.get("set").asBoolean());
            assertEquals("admin", secret.get("source").asText());
            assertEquals("AUTH_JWT_HMAC_SECRET", secret.get("env").asText());
            assertFalse(changed.body().contains(SECRET), "the secret is not echoed");
            assertEquals("configuration", setting(changed.body(), "auth.http.url").get("source").asText());

            awaitTokenAnswer(second, "second", 0x00);
            awaitTokenAnswer(first, "first", 0x00);
            var fromSecond = settings(second, "GET", null);
            assertEquals(200, fromSecond.statusCode(), fromSecond.body());
            assertEquals("basic,jwt", setting(fromSecond.body(), "auth.providers").get("value").asText());

            // Bad changes: 400 naming the setting, and nothing stored.
            Map<String, String> bad = Map.of(
                    "{\"settings\":{\"AUTH_PROVIDERS\":\"basic,nope\"}}", "auth.providers",
                    "{\"settings\":{\"auth.threads\":\"4\"}}", "settings.auth.threads",
                    "{\"settings\":{\"MQTT_TCP_PORT\":\"1\"}}", "settings.MQTT_TCP_PORT",
                    "{\"settings\":{\"no.such.thing\":\"1\"}}", "settings.no.such.thing",
                    "{\"settings\":{\"AUTH_JWT_PUBLIC_KEY_FILE\":\"" + dir.resolve("absent.pem") + "\"}}",
                    "auth.jwt.public-key-file",
                    "{\"settings\":{\"AUTH_JWT_HMAC_SECRET\":\"short\"}}", "auth.jwt.hmac-secret",
                    "{\"settings\":{}}", "settings");
            for (Map.Entry<String, String> b : bad.entrySet()) {
                var answer = settings(first, "PUT", b.getKey());
                assertEquals(400, answer.statusCode(), b.getKey() + " -> " + answer.body());
                assertTrue(answer.body().contains(b.getValue()), b.getKey() + " -> " + answer.body());
            }
            assertEquals("basic,jwt", setting(settings(first, "GET", null).body(), "auth.providers").get("value")
                    .asText(), "a refused change stored nothing");

            // An override this node cannot apply (a key file it lacks) does not keep it from starting:
            // it starts with its configured settings, and applies the overrides once they are fixed.
            new io.fleetmq.persistence.security.RuntimeSettings(db.database().dataSource()).replace("auth.", Map.of(
                    "auth.providers", "basic,jwt", "auth.jwt.hmac-secret", SECRET,
                    "auth.jwt.public-key-file", dir.resolve("absent.pem").toString()));
            second = nodes.restartSecond();
            assertEquals(0x86, tokenConnect(second, unique("tok")), "the configured settings: basic only");
            assertEquals(1.0, rejectedSettings(second));
            var fixed = settings(first, "PUT", "{\"settings\":{\"AUTH_JWT_PUBLIC_KEY_FILE\":null}}");
            assertEquals(200, fixed.statusCode(), fixed.body());
            awaitTokenAnswer(second, "restarted second", 0x00);
        } finally {
            var reset = settings(first, "DELETE", null);
            assertEquals(200, reset.statusCode(), reset.body());
            assertEquals(List.of("basic"), JSON.convertValue(JSON.readTree(reset.body()).get("providers"), List.class));
        }
        awaitTokenAnswer(second, "second", 0x86);
        awaitTokenAnswer(first, "first", 0x86);
    }
}
