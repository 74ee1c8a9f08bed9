package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node with AUTH_PROVIDERS=basic,jwt and anonymous clients refused: a token in the CONNECT
 * password connects and its claims' rules apply; bad tokens get 0x86.
 */
class JwtConnectTest {

    static final String SECRET = "end-to-end-secret-0123456789abcdef-0123456789";

    @TempDir
    static Path dataDir;
    static PrivateDatabase db;
    static TestBroker broker;
    static SecurityFixture fx;

    @BeforeAll
    static void start() {
        db = PrivateDatabase.create();
        Map<String, String> env = new HashMap<>(db.env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("AUTH_PROVIDERS", "basic,jwt");
        env.put("AUTH_JWT_HMAC_SECRET", SECRET);
        env.put("AUTH_JWT_CLIENT_ID_CLAIM", "sub");
        env.put("AUTH_JWT_PUBLISH_CLAIM", "pub");
        env.put("AUTH_JWT_SUBSCRIBE_CLAIM", "subs");
        env.put("AUTH_JWT_CLOCK_SKEW", "1s");
        broker = TestBroker.start(dataDir, env);
        fx = new SecurityFixture(db, broker);
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static String token(String clientId, Instant exp) throws JOSEException {
        JWTClaimsSet claims = new JWTClaimsSet.Builder().subject(clientId).expirationTime(Date.from(exp))
                .claim("pub", List.of("devices/${clientid}/up")).claim("subs", List.of("devices/${clientid}/down"))
                .build();
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
        jwt.sign(new MACSigner(SECRET.getBytes(StandardCharsets.UTF_8)));
        return jwt.serialize();
    }

    @Test
    @DisplayName("A valid token connects without a user name; its claims' rules decide PUBLISH (0x87 outside) and SUBSCRIBE")
    void validToken() throws Exception {
        String clientId = unique("dev");
        String token = token(clientId, Instant.now().plusSeconds(600));
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, clientId, null, token).expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, "devices/" + clientId + "/up", "21.5"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(c.raw(), 2, "devices/other/up", "x"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(c.raw(), 3, "devices/" + clientId + "/down", "x"));
            assertEquals(0x01, SecurityFixture.subscribeV5(c.raw(), 4, "devices/" + clientId + "/down", 1));
            assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 5, "devices/+/down", 1));
        }
        // 3.1.1 with a user name as well: the token decides.
        try (var v3 = SecurityFixture.connect(broker.mqttPort(), 4, clientId, "any-user", token)) {
            v3.expect(0);
        }
    }

    @Test
    @DisplayName("A client is disconnected with 0x87 when its token's exp (and the clock skew) passes")
    void expiryDisconnects() throws Exception {
        String clientId = unique("dev");
        String token = token(clientId, Instant.now().plusSeconds(3));
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, clientId, null, token).expect(0x00)) {
            c.raw().socketTimeout(15_000);
            byte[] disconnect = c.raw().readType(14);
            assertEquals(0x87, disconnect[2] & 0xFF, "DISCONNECT reason code");
        }
    }

    @Test
    @DisplayName("An expired token, another client's token and a garbage token get 0x86, recorded as bad_credentials")
    void badTokens() throws Exception {
        String clientId = unique("dev");
        String expired = token(clientId, Instant.now().minusSeconds(3600));
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, clientId, null, expired)) {
            c.expect(0x86);
            assertTrue(c.raw().closedByBroker());
        }
        String othersToken = token(unique("other"), Instant.now().plusSeconds(600));
        SecurityFixture.connect(broker.mqttPort(), 5, clientId, null, othersToken).expect(0x86).close();
        String[] parts = token(clientId, Instant.now().plusSeconds(600)).split("\\.");
        String garbage = parts[0] + "." + parts[1] + ".AAAA" + parts[2].substring(4);
        SecurityFixture.connect(broker.mqttPort(), 5, clientId, null, garbage).expect(0x86).close();
        // MQTT 3.1.1 carries a password only after a user name [MQTT-3.1.2-22].
        SecurityFixture.connect(broker.mqttPort(), 4, clientId, "device", expired).expect(4).close();

        Await.until(Duration.ofSeconds(10), "the refusals in the log", () -> {
            var page = fx.refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 10);
            return page.total() == 1 && page.items().get(0).count() == 4;
        });
        RefusedConnection logged = fx.refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 10)
                .items().get(0);
        assertEquals(RefusedConnection.BAD_CREDENTIALS, logged.reason());
        assertTrue(logged.passwordGiven());
    }

    @Test
    @DisplayName("Without a password, anonymous refused: 0x87; basic credentials still work alongside jwt")
    void noPassword() throws Exception {
        SecurityFixture.connect(broker.mqttPort(), 5, unique("anon"), null, null).expect(0x87).close();
        String user = unique("basic");
        fx.credential(user, null, "pw", List.of(), List.of());
        SecurityFixture.connect(broker.mqttPort(), 5, unique("b"), user, "pw").expect(0x00).close();
        SecurityFixture.connect(broker.mqttPort(), 5, unique("b"), user, "wrong").expect(0x86).close();
    }

    @Test
    @DisplayName("mosquitto_pub -P \"$TOKEN\" as in docs/security.md: published with the token's rules; an expired token is refused")
    void mosquittoPub() throws Exception {
        Path binary = Path.of("/usr/bin/mosquitto_pub");
        assumeTrue(java.nio.file.Files.isExecutable(binary), binary + " not installed; skipping");
        String clientId = unique("sensor");
        String topic = "devices/" + clientId + "/up";
        String user = unique("watcher");
        fx.credential(user, null, "watch", List.of(), List.of("#"));
        try (var watcher = SecurityFixture.connect(broker.mqttPort(), 5, unique("w"), user, "watch").expect(0x00)) {
            assertEquals(0x01, SecurityFixture.subscribeV5(watcher.raw(), 1, topic, 1));
            String token = token(clientId, Instant.now().plusSeconds(600));
            assertEquals(0, mosquittoPub(binary, clientId, token, topic, "21.5"), "mosquitto_pub exit code");
            byte[] publish = watcher.raw().readType(3);
            assertTrue(new String(publish, StandardCharsets.UTF_8).endsWith("21.5"), "the watcher got the message");
        }
        assertTrue(mosquittoPub(binary, clientId, token(clientId, Instant.now().minusSeconds(600)), topic, "x") != 0,
                "an expired token is refused");
    }

    private static int mosquittoPub(Path binary, String clientId, String token, String topic, String message)
            throws Exception {
        Process p = new ProcessBuilder(binary.toString(), "-h", "127.0.0.1", "-p", String.valueOf(broker.mqttPort()),
                "-V", "mqttv5", "-i", clientId, "-P", token, "-t", topic, "-m", message, "-q", "1")
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "mosquitto_pub ends");
        return p.exitValue();
    }
}
