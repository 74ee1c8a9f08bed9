package io.fleetmq.app.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.AdminHttp;
import io.fleetmq.app.support.TwoNodes;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two nodes of one cluster (shared Kafka topics and PostgreSQL): the admin API of one node sees and
 * acts on sessions held by the other, and on those of the other once it is gone (the last test
 * stops the second node).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SessionsClusterApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    static TwoNodes nodes;
    static TestBroker first;
    static TestBroker second;
    static String token;

    @BeforeAll
    static void start() {
        nodes = TwoNodes.start(dir, "api-c", Map.of());
        first = nodes.first;
        second = nodes.second;
        token = nodes.token;
    }

    @AfterAll
    static void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    static HttpResponse<String> call(TestBroker node, String method, String path) {
        return AdminHttp.send(node.node().httpPort(), token, method, path, null);
    }

    static JsonNode get(TestBroker node, String path) {
        HttpResponse<String> r = call(node, "GET", path);
        assertEquals(200, r.statusCode(), r.body());
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String enc(String clientId) {
        return URLEncoder.encode(clientId, StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("A client connected to the other node is shown and gets DISCONNECT 0x98 when disconnected through this one")
    void disconnectOnTheOtherNode() throws Exception {
        String id = "remote/" + UUID.randomUUID().toString().substring(0, 8);
        try (RawMqtt raw = second.rawV5(id)) {
            Await.until(Duration.ofSeconds(10), "the session known on the first node",
                    () -> call(first, "GET", "/api/v1/sessions/" + enc(id)).statusCode() == 200);
            JsonNode s = get(first, "/api/v1/sessions/" + enc(id));
            assertEquals("api-c-2", s.get("node").asText());
            assertTrue(s.get("connected").asBoolean());
            assertTrue(s.get("nodeAlive").asBoolean());
            assertTrue(s.get("inFlight").isNull(), "in-flight is known only on the session's node");
            assertEquals("api-c-2", s.get("inFlightKnownOn").asText());
            assertEquals(0, get(second, "/api/v1/sessions/" + enc(id)).get("inFlight").asInt());
            assertEquals("api-c-2", get(first, "/api/v1/sessions?node=api-c-2&clientIdPrefix=" + enc(id))
                    .get("items").get(0).get("node").asText());

            assertEquals(202, call(first, "POST", "/api/v1/sessions/" + enc(id) + "/disconnect").statusCode());
            byte[] disconnect = raw.readType(14);
            assertEquals(0x98, disconnect[2] & 0xFF, "DISCONNECT 0x98 Administrative action from the other node");
        }
        Await.until(Duration.ofSeconds(10), "the session gone on both nodes",
                () -> call(first, "GET", "/api/v1/sessions/" + enc(id)).statusCode() == 404
                        && call(second, "GET", "/api/v1/sessions/" + enc(id)).statusCode() == 404);
    }

    @Test
    @DisplayName("Ending a session held by the other node drops it on both nodes and counts its queued messages")
    void endASessionOfTheOtherNode() {
        String id = "end-" + UUID.randomUUID().toString().substring(0, 8);
        String topic = "end/" + id;
        Mqtt5BlockingClient sub = second.v5(id);
        sub.connectWith().cleanStart(true).sessionExpiryInterval(600).send();
        sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
        sub.disconnect();
        nodes.awaitSubscriptions(id, 1);
        Mqtt5BlockingClient pub = first.connectedV5("pub-" + id);
        try {
            for (int i = 0; i < 2; i++) {
                pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
        } finally {
            pub.disconnect();
        }
        Await.until(Duration.ofSeconds(15), "two messages queued, seen from the first node", () -> {
            HttpResponse<String> r = call(first, "GET", "/api/v1/sessions/" + enc(id));
            return r.statusCode() == 200 && r.body().contains("\"queuedMessages\":2");
        });
        assertEquals(1, get(first, "/api/v1/subscriptions?clientId=" + enc(id)).get("total").asInt());
        assertFalse(get(first, "/api/v1/sessions/" + enc(id)).get("connected").asBoolean());
        double before = second.dropped("session_ended");

        assertEquals(204, call(first, "DELETE", "/api/v1/sessions/" + enc(id)).statusCode());
        for (TestBroker node : new TestBroker[] {first, second}) {
            Await.until(Duration.ofSeconds(10), "the session and its subscription gone on " + node.node(), () ->
                    get(node, "/api/v1/sessions?clientIdPrefix=" + enc(id)).get("total").asInt() == 0
                            && get(node, "/api/v1/subscriptions?filter=" + enc(topic)).get("total").asInt() == 0);
        }
        Await.until(Duration.ofSeconds(10), "its two queued messages counted as dropped on the node that held it",
                () -> second.dropped("session_ended") >= before + 2);
        assertEquals(404, call(second, "DELETE", "/api/v1/sessions/" + enc(id)).statusCode());
    }

    @Test
    @Order(Integer.MAX_VALUE)
    @DisplayName("A session of a node that is gone is ended by the cluster: state, subscriptions and queue")
    void endASessionOfAGoneNode() {
        String id = "gone-" + UUID.randomUUID().toString().substring(0, 8);
        String topic = "gone/" + id;
        Mqtt5BlockingClient sub = second.v5(id);
        sub.connectWith().cleanStart(true).sessionExpiryInterval(600).send();
        sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
        sub.disconnect();
        nodes.awaitSubscriptions(id, 1);
        Mqtt5BlockingClient pub = first.connectedV5("pub-" + id);
        try {
            for (int i = 0; i < 2; i++) {
                pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
        } finally {
            pub.disconnect();
        }
        Await.until(Duration.ofSeconds(15), "two messages queued", () -> {
            HttpResponse<String> r = call(first, "GET", "/api/v1/sessions/" + enc(id));
            return r.statusCode() == 200 && r.body().contains("\"queuedMessages\":2");
        });
        second.close();
        second = null;
        Await.until(Duration.ofSeconds(15), "the session's node known to be gone",
                () -> !get(first, "/api/v1/sessions/" + enc(id)).get("nodeAlive").asBoolean());
        assertEquals(409, call(first, "POST", "/api/v1/sessions/" + enc(id) + "/disconnect").statusCode());
        double before = first.dropped("session_ended");

        assertEquals(204, call(first, "DELETE", "/api/v1/sessions/" + enc(id)).statusCode());
        Await.until(Duration.ofSeconds(10), "the session and its subscription gone", () ->
                call(first, "GET", "/api/v1/sessions/" + enc(id)).statusCode() == 404
                        && get(first, "/api/v1/subscriptions?clientId=" + enc(id)).get("total").asInt() == 0);
        Await.until(Duration.ofSeconds(10), "its queued messages counted as dropped by the connect sequence",
                () -> first.dropped("session_ended") >= before + 2);
    }
}
