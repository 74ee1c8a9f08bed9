package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The admin API end to end: what an operator writes through HTTP is what MQTT clients meet. */
class AdminApiToMqttTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dataDir;
    static PrivateDatabase db;
    static TestBroker broker;
    static String token;

    @BeforeAll
    static void start() throws Exception {
        db = PrivateDatabase.create();
        Map<String, String> env = new HashMap<>(db.env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("ADMIN_PASSWORD", "operator-pw");
        broker = TestBroker.start(dataDir, env);
        HttpResponse<String> login = call("POST", "/api/v1/auth/login",
                "{\"username\":\"admin\",\"password\":\"operator-pw\"}");
        assertEquals(200, login.statusCode(), login.body());
        token = JSON.readTree(login.body()).get("token").asText();
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

    private static HttpResponse<String> call(String method, String path, String body) {
        return io.fleetmq.app.support.AdminHttp.send(broker.node().httpPort(), token, method, path, body);
    }

    private static int connectCode(String clientId, String user, String password) {
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, clientId, user, password)) {
            return c.code();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    @DisplayName("A credential created through the API lets its client in; a new password set through the API disconnects it (0x87) and only the new one works")
    void credentialLifecycle() throws Exception {
        String user = "api-" + UUID.randomUUID().toString().substring(0, 8);
        String clientId = user + "-dev";
        HttpResponse<String> created = call("POST", "/api/v1/credentials", "{\"type\":\"basic\",\"username\":\"" + user
                + "\",\"password\":\"first\",\"publish\":[\"devices/${clientid}/up\"],\"subscribe\":[]}");
        assertEquals(201, created.statusCode(), created.body());
        String id = JSON.readTree(created.body()).get("id").asText();
        Await.until(Duration.ofSeconds(10), "the new credential works", () -> connectCode(clientId, user, "first") == 0);
        try (var c = SecurityFixture.connect(broker.mqttPort(), 5, clientId, user, "first").expect(0x00)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, "devices/" + clientId + "/up", "1"));
            HttpResponse<String> replaced = call("PUT", "/api/v1/credentials/" + id, "{\"type\":\"basic\",\"username\":\""
                    + user + "\",\"password\":\"second\",\"publish\":[],\"subscribe\":[]}");
            assertEquals(200, replaced.statusCode(), replaced.body());
            assertTrue(!replaced.body().contains("second") && !replaced.body().contains("$2"), "no password in the answer");
            byte[] disconnect = c.raw().readType(14);
            assertEquals(0x87, disconnect[2] & 0xFF, "DISCONNECT 0x87 after the password change");
        }
        assertEquals(0x86, connectCode(clientId, user, "first"));
        assertEquals(0x00, connectCode(clientId, user, "second"));
        assertEquals(204, call("DELETE", "/api/v1/credentials/" + id, null).statusCode());
        Await.until(Duration.ofSeconds(10), "the deleted credential refused", () -> connectCode(clientId, user, "second") == 0x86);
    }

    @Test
    @DisplayName("A client blocked through the API is refused with 0x8A, and the refusal is listed by GET /api/v1/refused-connections")
    void blockAndRefusedLog() throws Exception {
        String user = "blk-" + UUID.randomUUID().toString().substring(0, 8);
        assertEquals(201, call("POST", "/api/v1/credentials", "{\"type\":\"basic\",\"username\":\"" + user
                + "\",\"password\":\"pw\",\"publish\":[],\"subscribe\":[]}").statusCode());
        String clientId = user + "-c";
        HttpResponse<String> blocked = call("POST", "/api/v1/blocked",
                "{\"type\":\"client_id\",\"value\":\"" + clientId + "\"}");
        assertEquals(201, blocked.statusCode(), blocked.body());
        Await.until(Duration.ofSeconds(10), "blocked", () -> connectCode(clientId, user, "pw") == 0x8A);
        Await.until(Duration.ofSeconds(10), "the refusal listed", () -> {
            try {
                JsonNode page = JSON.readTree(call("GET", "/api/v1/refused-connections?clientId=" + clientId
                        + "&reason=blocked", null).body());
                return page.get("total").asLong() == 1 && page.get("items").get(0).get("count").asLong() >= 1
                        && user.equals(page.get("items").get(0).get("username").asText());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        String blockId = JSON.readTree(blocked.body()).get("id").asText();
        assertEquals(204, call("DELETE", "/api/v1/blocked/" + blockId, null).statusCode());
        Await.until(Duration.ofSeconds(10), "unblocked", () -> connectCode(clientId, user, "pw") == 0x00);
    }
}
