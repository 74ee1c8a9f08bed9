package io.fleetmq.app.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.AdminHttp;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.testkit.RawMqtt;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /api/v1/dropped}, {@code /api/v1/stats} and {@code /api/v1/shared-subscriptions} on one
 * node, from real drops, real traffic and a real APPLICATION shared subscription's Kafka backlog.
 */
class OperationsApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    static PrivateDatabase db;
    static TestBroker broker;
    static String token;

    @BeforeAll
    static void start() {
        db = PrivateDatabase.create();
        Map<String, String> env = new HashMap<>(db.env());
        env.put("ADMIN_PASSWORD", "ops-Password-1");
        env.put("ADMIN_STATS_INTERVAL", "1s");
        env.put("APPLICATION_CLIENT_ID_PATTERN", "app-.*");
        // The sweeper must not take the test's backlog away before the test deletes it.
        env.put("APPLICATION_SHARED_GRACE", "1h");
        broker = TestBroker.start(dir, env);
        HttpResponse<String> login = AdminHttp.send(broker.node().httpPort(), null, "POST", "/api/v1/auth/login",
                "{\"username\":\"admin\",\"password\":\"ops-Password-1\"}");
        assertEquals(200, login.statusCode(), login.body());
        token = json(login).get("token").asText();
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

    @Test
    void droppedMessagesShowReasonClientTopicAndTheCountsOfMetrics() throws IOException {
        String offline = unique("dev-offline");
        String small = unique("dev-small");
        // QoS 0 for a persistent session whose client is away is not kept: client_offline_qos0.
        Mqtt5BlockingClient away = broker.v5(offline);
        away.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        away.subscribeWith().topicFilter("ops/" + offline + "/#").qos(MqttQos.AT_MOST_ONCE).send();
        away.disconnect();
        Mqtt5BlockingClient pub = broker.connectedV5(unique("dev-pub"));
        try (RawMqtt raw = broker.raw()) {
            // Maximum Packet Size 64: the 200-byte message cannot be sent to it (packet_too_large).
            raw.send(RawMqtt.connect(5, true, 60, small, "05 2700000040"));
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, "ops/" + small, 0));
            raw.readType(9);
            pub.publishWith().topic("ops/" + small).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[200]).send();
            Await.until(WAIT, "the offline session is known", () -> {
                pub.publishWith().topic("ops/" + offline + "/t").qos(MqttQos.AT_MOST_ONCE).payload(new byte[] {1})
                        .send();
                return !drops("?clientId=" + offline).path("items").isEmpty();
            });

            JsonNode tooLarge = drops("?clientId=" + small).path("items");
            assertEquals(1, tooLarge.size(), tooLarge.toString());
            assertEquals("packet_too_large", tooLarge.get(0).path("reason").asText());
            assertEquals(small, tooLarge.get(0).path("clientId").asText());
            assertEquals("ops/" + small, tooLarge.get(0).path("topic").asText());
            assertEquals("test-node", tooLarge.get(0).path("node").asText());
            assertTrue(Instant.parse(tooLarge.get(0).path("time").asText()).isAfter(Instant.now().minusSeconds(60)));
        }
        JsonNode off = drops("?clientId=" + offline).path("items").get(0);
        assertEquals("client_offline_qos0", off.path("reason").asText());
        assertEquals("ops/" + offline + "/t", off.path("topic").asText());
        pub.disconnect();

        // Filters: reason, client (part of it), node, paging; newest first.
        JsonNode byReason = drops("?reason=packet_too_large&clientId=" + small.substring(0, small.length() - 3));
        assertEquals(1, byReason.path("total").asLong(), byReason.toString());
        assertEquals(0, drops("?reason=expired&clientId=" + small).path("total").asLong());
        assertEquals(0, drops("?node=elsewhere").path("total").asLong());
        assertTrue(drops("?node=elsewhere").path("counts").path("nodes").isEmpty());
        JsonNode firstPage = drops("?limit=1");
        assertEquals(1, firstPage.path("items").size());
        assertEquals(1, firstPage.path("pageSize").asInt());
        assertTrue(firstPage.path("total").asLong() >= 2);
        JsonNode all = drops("?limit=1000");
        Instant previous = Instant.MAX;
        for (JsonNode d : all.path("items")) {
            Instant t = Instant.parse(d.path("time").asText());
            assertFalse(t.isAfter(previous), "newest first");
            previous = t;
        }

        // The counts are those of fleetmq_messages_dropped_total.
        Await.until(WAIT, "the counts to match /metrics", () -> {
            JsonNode counts = drops("").path("counts");
            for (String reason : new String[] {"packet_too_large", "client_offline_qos0"}) {
                long total = counts.path("total").path(reason).asLong();
                if (total < 1 || total != (long) broker.dropped(reason)
                        || counts.path("nodes").path("test-node").path(reason).asLong() != total) {
                    return false;
                }
            }
            return true;
        });

        ApiTestNode.assertError(get("/api/v1/dropped?reason=Not%20One"), 400, "bad_request", "reason:");
        ApiTestNode.assertError(get("/api/v1/dropped?limit=0"), 400, "bad_request", "limit:");
        ApiTestNode.assertError(AdminHttp.send(broker.node().httpPort(), null, "GET", "/api/v1/dropped", null), 401,
                "unauthorized", null);
    }

    @Test
    void statisticsGrowEverySecondAndCountWhatWasPublished() {
        Await.until(WAIT, "three samples", () -> stats("").path("nodes").get(0).path("samples").size() >= 3);
        String topic = "ops/stats/" + UUID.randomUUID();
        Mqtt5BlockingClient sub = broker.connectedV5(unique("dev-stats-sub"));
        sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
        Mqtt5BlockingClient pub = broker.connectedV5(unique("dev-stats-pub"));
        Instant before = Instant.now().minusSeconds(2);
        for (int i = 0; i < 7; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[10]).send();
        }
        Await.until(WAIT, "the samples to hold the 7 messages in and out", () -> {
            JsonNode s = stats("?node=test-node&since=" + before);
            long in = 0, bytesIn = 0, out = 0, bytesOut = 0, connections = 0;
            for (JsonNode x : s.path("nodes").get(0).path("samples")) {
                in += x.path("messagesIn").asLong();
                bytesIn += x.path("bytesIn").asLong();
                out += x.path("messagesOut").asLong();
                bytesOut += x.path("bytesOut").asLong();
                connections = Math.max(connections, x.path("connections").asLong());
            }
            return in >= 7 && bytesIn >= 70 && out >= 7 && bytesOut >= 70 && connections >= 2;
        });
        JsonNode s = stats("");
        assertEquals(1.0, s.path("intervalSeconds").asDouble());
        JsonNode node = s.path("nodes").get(0);
        assertEquals("test-node", node.path("node").asText());
        JsonNode samples = node.path("samples");
        JsonNode total = s.path("total");
        assertEquals(samples.size(), total.size(), "one node: the total is its series");
        long previous = 0;
        for (int i = 0; i < samples.size(); i++) {
            JsonNode x = samples.get(i);
            long t = Instant.parse(x.path("time").asText()).toEpochMilli();
            assertEquals(0, t % 1000, "samples fall on interval boundaries");
            assertTrue(t > previous, "oldest first");
            previous = t;
            assertEquals(x.path("messagesIn").asLong(), total.get(i).path("messagesIn").asLong());
            assertEquals(x.path("time").asText(), total.get(i).path("time").asText());
        }
        Instant last = Instant.parse(samples.get(samples.size() - 1).path("time").asText());
        assertEquals(0, stats("?since=" + last).path("nodes").get(0).path("samples").size());
        assertEquals(0, stats("?node=elsewhere").path("nodes").size());
        ApiTestNode.assertError(get("/api/v1/stats?since=yesterday"), 400, "bad_request", "since:");
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    void sharedSubscriptionsShowTheBacklogLagAndAnOrphanedOneCanBeDeleted() {
        String app = unique("app-member");
        String group = "g" + UUID.randomUUID().toString().substring(0, 8);
        String filter = "ops/" + group + "/#";
        Mqtt5BlockingClient member = broker.v5(app);
        member.connectWith().cleanStart(true).sessionExpiryInterval(3600).send();
        member.subscribeWith().topicFilter("$share/" + group + "/" + filter).qos(MqttQos.AT_LEAST_ONCE).send();
        member.disconnect();
        Mqtt5BlockingClient device = broker.connectedV5(unique("dev-shared"));
        device.subscribeWith().topicFilter("$share/d" + group + "/ops/+/x").qos(MqttQos.AT_MOST_ONCE).send();

        Mqtt5BlockingClient pub = broker.connectedV5(unique("dev-shared-pub"));
        for (int i = 0; i < 5; i++) {
            pub.publishWith().topic("ops/" + group + "/a").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
        }
        Await.until(WAIT, "the backlog to show 5 unread messages", () -> {
            JsonNode g = shared(group, filter);
            return g != null && g.path("backlog").path("lag").asLong() == 5;
        });
        JsonNode g = shared(group, filter);
        assertEquals("APPLICATION", g.path("type").asText());
        assertEquals(1, g.path("subscribers").size());
        assertEquals(app, g.path("subscribers").get(0).path("clientId").asText());
        assertFalse(g.path("subscribers").get(0).path("connected").asBoolean());
        assertTrue(g.path("backlog").path("members").isEmpty(), "no reader while the member is away");
        assertTrue(g.path("backlog").path("topic").asText().contains("app.shared."));
        long endOffsets = 0;
        for (JsonNode p : g.path("backlog").path("partitions")) {
            endOffsets += p.path("endOffset").asLong();
        }
        assertEquals(5, endOffsets);

        JsonNode d = shared("d" + group, "ops/+/x");
        assertNotNull(d);
        assertEquals("DEVICE", d.path("type").asText());
        assertTrue(d.path("backlog").isNull() || d.path("backlog").isMissingNode());
        assertTrue(d.path("subscribers").get(0).path("connected").asBoolean());

        // The filter follows the group as path segments, each percent-encoded (# as %23, + as %2B).
        String path = "/api/v1/shared-subscriptions/" + group + "/ops/" + group + "/%23";
        ApiTestNode.assertError(send("DELETE", path), 409, "conflict", null);
        ApiTestNode.assertError(send("DELETE", "/api/v1/shared-subscriptions/d" + group + "/ops/%2B/x"), 409,
                "conflict", null);

        // The member's session ends: the backlog waits, without members, for the grace period.
        Mqtt5BlockingClient again = broker.v5(app);
        again.connectWith().cleanStart(true).sessionExpiryInterval(0).send();
        again.disconnect();
        Await.until(WAIT, "the group to have no subscribers", () -> {
            JsonNode x = shared(group, filter);
            return x != null && x.path("subscribers").isEmpty() && "APPLICATION".equals(x.path("type").asText());
        });
        assertEquals(204, send("DELETE", path).statusCode());
        Await.until(WAIT, "the group to be gone", () -> shared(group, filter) == null);
        ApiTestNode.assertError(send("DELETE", path), 404, "not_found", null);
        device.disconnect();
        pub.disconnect();
    }

    private static JsonNode shared(String group, String filter) {
        JsonNode page = json(get("/api/v1/shared-subscriptions?pageSize=1000"));
        for (JsonNode item : page.path("items")) {
            if (group.equals(item.path("group").asText()) && filter.equals(item.path("filter").asText())) {
                return item;
            }
        }
        return null;
    }

    private static JsonNode drops(String query) {
        return json(get("/api/v1/dropped" + query));
    }

    private static JsonNode stats(String query) {
        return json(get("/api/v1/stats" + query));
    }

    private static HttpResponse<String> get(String path) {
        return send("GET", path);
    }

    private static HttpResponse<String> send(String method, String path) {
        return AdminHttp.send(broker.node().httpPort(), token, method, path, null);
    }

    private static JsonNode json(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
