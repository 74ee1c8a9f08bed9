package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.app.security.http.FakeAuthService;
import io.fleetmq.app.security.http.FakeAuthService.Reply;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node with AUTH_PROVIDERS=http,basic and anonymous clients refused, asking an identity service on
 * a local port: its allow (with rules), deny, ignore (basic decides) and being down reach the client.
 */
class HttpProviderNodeTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dataDir;
    static PrivateDatabase db;
    static FakeAuthService service;
    static TestBroker broker;
    static SecurityFixture fx;

    @BeforeAll
    static void start() throws IOException {
        db = PrivateDatabase.create();
        service = new FakeAuthService();
        service.answer(HttpProviderNodeTest::decide);
        Map<String, String> env = new HashMap<>(db.env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("AUTH_PROVIDERS", "http,basic");
        env.put("AUTH_HTTP_URL", service.url().toString());
        env.put("AUTH_HTTP_HEADERS", "Authorization: Bearer node-secret");
        env.put("AUTH_HTTP_TIMEOUT", "1s");
        broker = TestBroker.start(dataDir, env);
        fx = new SecurityFixture(db, broker);
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
        if (service != null) {
            service.close();
        }
        if (db != null) {
            db.close();
        }
    }

    /** The service: users named by what it answers for them. */
    private static Reply decide(String body) {
        JsonNode req;
        try {
            req = JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String user = req.path("username").asText("");
        String password = req.path("password").asText("");
        if (user.startsWith("alice") && password.equals("right")) {
            return Reply.json("{\"result\":\"allow\",\"clientType\":\"DEVICE\","
                    + "\"publish\":[\"devices/${clientid}/up\"],\"subscribe\":[\"devices/${clientid}/down\"]}");
        }
        if (user.startsWith("bob")) {
            return Reply.json("{\"result\":\"ignore\"}");
        }
        if (user.startsWith("down")) {
            return new Reply(503, "{\"error\":\"maintenance\"}");
        }
        if (user.startsWith("broken")) {
            throw new IllegalStateException("the service drops the connection");
        }
        return Reply.json("{\"result\":\"deny\"}");
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static int port() {
        return broker.mqttPort();
    }

    private static double requests(String outcome) {
        Matcher m = Pattern.compile("^fleetmq_auth_http_requests_total\\{[^}]*outcome=\"" + outcome + "\"[^}]*} (\\S+)$",
                Pattern.MULTILINE).matcher(broker.scrapeMetrics());
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    @Test
    @DisplayName("allowed by the service: connects, and the service's rules apply (PUBACK 0x87 outside them, SUBACK 0x87)")
    void allowedWithRules() throws Exception {
        String clientId = unique("dev");
        String user = unique("alice");
        try (var c = SecurityFixture.connect(port(), 5, clientId, user, "right").expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, "devices/" + clientId + "/up", "1"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(c.raw(), 2, "devices/other/up", "1"));
            assertEquals(0x01, SecurityFixture.subscribeV5(c.raw(), 3, "devices/" + clientId + "/down", 1));
            assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 4, "devices/+/down", 1));
        }
        JsonNode asked = service.received().stream()
                .map(r -> {
                    try {
                        return JSON.readTree(r.body());
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                })
                .filter(j -> clientId.equals(j.path("clientId").asText()))
                .findFirst().orElseThrow();
        assertEquals(user, asked.get("username").asText());
        assertEquals("127.0.0.1", asked.get("address").asText());
        assertEquals("MQTT 5", asked.get("protocol").asText());
        assertEquals(false, asked.get("tls").asBoolean());
        assertTrue(service.received().stream()
                .allMatch(r -> List.of("Bearer node-secret").equals(r.headers().get("Authorization"))));
    }

    @Test
    @DisplayName("denied by the service: 0x86 (3.1.1: 4), recorded as bad_credentials")
    void denied() throws Exception {
        String clientId = unique("dev");
        SecurityFixture.connect(port(), 5, clientId, unique("alice"), "wrong").expect(0x86).close();
        SecurityFixture.connect(port(), 4, clientId, unique("mallory"), "x").expect(4).close();
        Await.until(Duration.ofSeconds(10), "the refusals in the log", () -> {
            var page = fx.refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 10);
            return page.total() == 1 && page.items().get(0).count() == 2;
        });
        assertEquals(RefusedConnection.BAD_CREDENTIALS,
                fx.refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 10).items().get(0).reason());
        assertTrue(requests("deny") >= 2);
    }

    @Test
    @DisplayName("the service ignores the client: basic, next in AUTH_PROVIDERS, decides with its credentials")
    void ignoredThenBasicDecides() throws Exception {
        String user = unique("bob");
        fx.credential(user, null, "basic-pw", List.of("bob/#"), List.of());
        try (var c = SecurityFixture.connect(port(), 5, unique("b"), user, "basic-pw").expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, "bob/x", "1"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(c.raw(), 2, "devices/x/up", "1"));
        }
        SecurityFixture.connect(port(), 5, unique("b"), user, "wrong").expect(0x86).close();
        SecurityFixture.connect(port(), 5, unique("b"), unique("bob"), "nobody").expect(0x86).close();
        assertTrue(requests("ignore") >= 3);
    }

    @Test
    @DisplayName("the service is down (503, a dropped connection): fail closed refuses with 0x88 (3.1.1: 3), recorded as auth_unavailable")
    void serviceDown() throws Exception {
        String clientId = unique("dev");
        SecurityFixture.connect(port(), 5, clientId, unique("down"), "x").expect(0x88).close();
        SecurityFixture.connect(port(), 4, clientId, unique("broken"), "x").expect(3).close();
        Await.until(Duration.ofSeconds(10), "the refusals in the log", () -> {
            var page = fx.refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 10);
            return page.total() == 1 && page.items().get(0).count() == 2;
        });
        assertEquals(RefusedConnection.AUTH_UNAVAILABLE,
                fx.refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 10).items().get(0).reason());
        assertTrue(requests("error") >= 1);
        assertTrue(requests("unreachable") >= 1);
    }
}
