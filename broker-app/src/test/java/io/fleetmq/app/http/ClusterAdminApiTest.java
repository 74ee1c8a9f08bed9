package io.fleetmq.app.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.AdminHttp;
import io.fleetmq.app.support.TwoNodes;
import io.fleetmq.app.support.Received;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two nodes of one cluster, driven through the first node's admin API: a retained message deleted
 * there is gone on the second, and the second node is drained and undrained from the first.
 */
class ClusterAdminApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String REFERENCE = "mqtt-b.example.com:1883";

    @TempDir
    static Path dir;
    static TwoNodes nodes;
    static TestBroker first;
    static TestBroker second;
    static String token;

    @BeforeAll
    static void start() {
        nodes = TwoNodes.start(dir, "adm", Map.of("CLUSTER_SHUTDOWN_SERVER_REFERENCE", REFERENCE));
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

    private static HttpResponse<String> viaFirst(String method, String path) {
        return AdminHttp.send(first.node().httpPort(), token, method, path, null);
    }

    private static JsonNode json(HttpResponse<String> r) {
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int ready(TestBroker node) {
        return AdminHttp.send(node.node().httpPort(), null, "GET", "/health/ready", null).statusCode();
    }

    private static JsonNode nodeSeenByFirst(String nodeId) {
        for (JsonNode n : json(viaFirst("GET", "/api/v1/cluster/nodes")).path("items")) {
            if (n.path("nodeId").asText().equals(nodeId)) {
                return n;
            }
        }
        return null;
    }

    /** Topics a new subscriber on {@code node} gets as retained messages, up to a marker published after. */
    private static List<String> retainedSeenOn(TestBroker node, String filter, String marker) throws Exception {
        String subId = "sub-" + UUID.randomUUID().toString().substring(0, 8);
        Mqtt5BlockingClient sub = node.connectedV5(subId);
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter(filter).qos(MqttQos.AT_LEAST_ONCE).send();
            nodes.awaitSubscriptions(subId, 1); // the marker may be routed by the other node
            Mqtt5BlockingClient pub = node.connectedV5("pub-" + UUID.randomUUID().toString().substring(0, 8));
            pub.publishWith().topic(marker).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            pub.disconnect();
            List<String> seen = new ArrayList<>();
            while (true) {
                Mqtt5Publish p = Received.next(publishes);
                if (p.getTopic().toString().equals(marker)) {
                    return seen;
                }
                seen.add(p.getTopic().toString());
            }
        } finally {
            sub.disconnect();
        }
    }

    @Test
    @DisplayName("A retained message deleted through one node's API is gone for a new subscriber on the other")
    void retainedDeleteReachesTheOtherNode() throws Exception {
        String base = "cl-" + UUID.randomUUID().toString().substring(0, 8);
        Mqtt5BlockingClient pub = second.connectedV5("p-" + base);
        pub.publishWith().topic(base + "/state").qos(MqttQos.AT_LEAST_ONCE).retain(true)
                .payload("on".getBytes(StandardCharsets.UTF_8)).send();
        pub.disconnect();
        String path = "/api/v1/retained/" + URLEncoder.encode(base + "/state", StandardCharsets.UTF_8);
        Await.until(Duration.ofSeconds(10), "the first node knows the retained message",
                () -> viaFirst("GET", path).statusCode() == 200);
        assertEquals(List.of(base + "/state"), retainedSeenOn(second, base + "/#", base + "/marker"));

        HttpResponse<String> deleted = viaFirst("DELETE", path);
        assertEquals(204, deleted.statusCode(), deleted.body());
        // The second node applies the deletion from the retained log; a subscriber after that gets nothing.
        Await.until(Duration.ofSeconds(10), "the second node forgot the retained message",
                () -> AdminHttp.send(second.node().httpPort(), token, "GET", path, null).statusCode() == 404);
        assertEquals(List.of(), retainedSeenOn(second, base + "/#", base + "/marker"));
    }

    @Test
    @DisplayName("Draining the second node through the first moves its clients away and refuses new ones until undrained")
    void drainAndUndrainTheOtherNode() throws Exception {
        // Its listener binds after it joined: its address comes with a later heartbeat.
        Await.until(Duration.ofSeconds(10), "the second node's address in its heartbeat",
                () -> nodeSeenByFirst("adm-2").path("address").isTextual());
        JsonNode before = nodeSeenByFirst("adm-2");
        assertEquals("serving", before.path("state").asText(), before.toString());
        assertTrue(before.path("ready").asBoolean());
        assertFalse(before.path("self").asBoolean());
        assertEquals("serving", nodeSeenByFirst("adm-1").path("state").asText());
        assertTrue(nodeSeenByFirst("adm-1").path("self").asBoolean());
        assertTrue(before.path("connectedSessions").isInt(), before.toString());
        assertTrue(before.path("address").asText().endsWith(":" + second.mqttPort()), before.toString());
        assertFalse(before.path("startedAt").asText().isEmpty(), before.toString());

        try (RawMqtt v5 = second.rawV5("drained-v5"); RawMqtt v3 = second.raw()) {
            v3.send(RawMqtt.connectV311("drained-v3"));
            assertEquals(0, v3.readType(2)[3], "3.1.1 CONNACK accepted");

            HttpResponse<String> drained = viaFirst("POST", "/api/v1/cluster/nodes/adm-2/drain");
            assertEquals(200, drained.statusCode(), drained.body());
            assertEquals("draining", json(drained).path("state").asText(), drained.body());
            assertFalse(json(drained).path("ready").asBoolean());

            byte[] disconnect = v5.readType(14);
            assertEquals(0x9C, disconnect[2] & 0xFF, "DISCONNECT 0x9C Use another server");
            assertTrue(new String(disconnect, StandardCharsets.UTF_8).contains(REFERENCE), "with the server reference");
            v3.socketTimeout(10_000);
            assertTrue(v3.closedByBroker(), "the 3.1.1 client's connection is closed");
        }
        try (RawMqtt refused = second.raw()) {
            refused.send(RawMqtt.connectV5("refused-v5"));
            assertEquals(0x9C, refused.readType(2)[3] & 0xFF, "CONNACK 0x9C while drained");
        }
        try (RawMqtt refused = second.raw()) {
            refused.send(RawMqtt.connectV311("refused-v3"));
            assertEquals(3, refused.readType(2)[3], "3.1.1 CONNACK 3 Server unavailable while drained");
        }
        Await.until(Duration.ofSeconds(10), "the second node reports not ready", () -> ready(second) == 503);
        assertEquals(200, ready(first));
        assertEquals("draining", nodeSeenByFirst("adm-2").path("state").asText());
        assertEquals("serving", nodeSeenByFirst("adm-1").path("state").asText());
        try (RawMqtt elsewhere = first.rawV5("elsewhere")) {
            assertTrue(elsewhere != null, "the first node takes clients");
        }

        HttpResponse<String> undrained = viaFirst("POST", "/api/v1/cluster/nodes/adm-2/undrain");
        assertEquals(200, undrained.statusCode(), undrained.body());
        assertEquals("serving", json(undrained).path("state").asText(), undrained.body());
        try (RawMqtt back = second.rawV5("back-v5")) {
            assertTrue(back != null, "CONNACK 0x00 again");
        }
        Await.until(Duration.ofSeconds(10), "the second node reports ready again", () -> ready(second) == 200);

        HttpResponse<String> unknown = viaFirst("POST", "/api/v1/cluster/nodes/no-such-node/drain");
        assertEquals(404, unknown.statusCode(), unknown.body());
        assertEquals("not_found", json(unknown).path("error").asText());
        assertNull(nodeSeenByFirst("no-such-node"));
    }
}
