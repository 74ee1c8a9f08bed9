package io.fleetmq.app.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Any node's API shows the whole cluster: what the second node dropped and sampled, read from the first. */
class OperationsClusterTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    static TwoNodes nodes;
    static TestBroker first;
    static TestBroker second;
    static String token;

    @BeforeAll
    static void start() {
        nodes = TwoNodes.start(dir, "ops", Map.of("ADMIN_STATS_INTERVAL", "1s"));
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

    @Test
    void dropsAndStatisticsOfTheSecondNodeAreServedByTheFirst() throws IOException {
        String small = "small-" + UUID.randomUUID().toString().substring(0, 8);
        String topic = "ops/cluster/" + small;
        Mqtt5BlockingClient pub = second.connectedV5("pub-" + small);
        try (RawMqtt raw = second.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, small, "05 2700000040")); // Maximum Packet Size 64
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, topic, 0));
            raw.readType(9);
            nodes.awaitSubscriptions(small, 1); // the first node may be the one routing these messages
            for (int i = 0; i < 3; i++) {
                pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[200]).send();
            }
            Await.until(WAIT, "the second node's drops to show on the first", () ->
                    get("/api/v1/dropped?node=ops-2&clientId=" + small).path("total").asLong() == 3);
        }
        JsonNode page = get("/api/v1/dropped?clientId=" + small);
        JsonNode drop = page.path("items").get(0);
        assertEquals("ops-2", drop.path("node").asText());
        assertEquals("packet_too_large", drop.path("reason").asText());
        assertEquals(topic, drop.path("topic").asText());
        Await.until(WAIT, "the second node's counts to show on the first", () -> {
            JsonNode counts = get("/api/v1/dropped").path("counts");
            long second = counts.path("nodes").path("ops-2").path("packet_too_large").asLong();
            return second >= 3 && counts.path("nodes").has("ops-1")
                    && counts.path("total").path("packet_too_large").asLong()
                    == second + counts.path("nodes").path("ops-1").path("packet_too_large").asLong();
        });

        Await.until(WAIT, "the second node's samples to count its messages", () -> {
            JsonNode stats = get("/api/v1/stats?node=ops-2");
            if (stats.path("nodes").size() != 1) {
                return false;
            }
            long in = 0;
            long dropped = 0;
            for (JsonNode s : stats.path("nodes").get(0).path("samples")) {
                in += s.path("messagesIn").asLong();
                dropped += s.path("drops").path("packet_too_large").asLong();
            }
            return in >= 3 && dropped >= 3;
        });
        JsonNode stats = get("/api/v1/stats");
        assertEquals(2, stats.path("nodes").size(), stats.toString());
        assertEquals("ops-1", stats.path("nodes").get(0).path("node").asText(), "the answering node first");
        assertEquals("ops-2", stats.path("nodes").get(1).path("node").asText());
        long totalIn = 0;
        long nodesIn = 0;
        for (JsonNode s : stats.path("total")) {
            totalIn += s.path("messagesIn").asLong();
        }
        for (JsonNode n : stats.path("nodes")) {
            for (JsonNode s : n.path("samples")) {
                nodesIn += s.path("messagesIn").asLong();
            }
        }
        assertEquals(nodesIn, totalIn, "the total adds up the nodes");
        assertTrue(totalIn >= 3);
        pub.disconnect();
    }

    private static JsonNode get(String path) {
        return json(AdminHttp.send(first.node().httpPort(), token, "GET", path, null));
    }

    private static JsonNode json(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
