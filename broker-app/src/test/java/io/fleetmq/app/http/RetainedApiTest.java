package io.fleetmq.app.http;

import static io.fleetmq.app.http.ApiTestNode.assertError;
import static io.fleetmq.app.http.ApiTestNode.body;
import static io.fleetmq.app.http.ApiTestNode.json;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PayloadFormatIndicator;
import io.fleetmq.app.support.Received;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** {@code /api/v1/retained} and {@code /api/v1/publish} on one real node, with real MQTT clients. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RetainedApiTest {

    private static final String PATH = "/api/v1/retained";
    /** Small, so a too large publish fits the admin port's request limit. */
    private static final int MAX_PACKET_SIZE = 4096;

    @TempDir
    static Path dataDir;
    private ApiTestNode node;
    private String token;
    private int mqttPort;
    private final List<Mqtt5BlockingClient> clients = new ArrayList<>();

    @BeforeAll
    void start() {
        node = new ApiTestNode(dataDir, Map.of("ADMIN_PASSWORD", "admin-Password-3",
                "MQTT_MAX_PACKET_SIZE", Integer.toString(MAX_PACKET_SIZE)));
        token = node.token("admin", "admin-Password-3");
        mqttPort = node.mqttPort();
    }

    @AfterAll
    void stop() {
        for (Mqtt5BlockingClient c : clients) {
            if (c.getState().isConnected()) {
                c.disconnect();
            }
        }
        node.close();
    }

    private HttpResponse<String> send(String method, String path, Object body) {
        return node.send(method, path, body == null ? null : body instanceof String s ? s : json(body), token);
    }

    private Mqtt5BlockingClient client() {
        Mqtt5BlockingClient c = Mqtt5Client.builder().identifier("ret-" + UUID.randomUUID().toString().substring(0, 8))
                .serverHost("127.0.0.1").serverPort(mqttPort).buildBlocking();
        c.connect();
        clients.add(c);
        return c;
    }

    private static String base() {
        return "ret-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static String encoded(String topic) {
        return URLEncoder.encode(topic, StandardCharsets.UTF_8);
    }

    /** A retained QoS 1 PUBLISH of an MQTT client; this node holds it once PUBACK came. */
    private void retain(Mqtt5BlockingClient c, String topic, String payload) {
        c.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).retain(true)
                .payload(payload.getBytes(StandardCharsets.UTF_8)).send();
    }

    private static Map<String, Object> message(String topic, String payload) {
        Map<String, Object> m = new HashMap<>();
        m.put("topic", topic);
        m.put("payload", payload);
        return m;
    }

    /** The topics a new subscriber to {@code filter} gets as retained messages (RETAIN 1), up to a marker published after. */
    private List<String> retainedSeenBy(String filter, String markerTopic) throws InterruptedException {
        Mqtt5BlockingClient sub = client();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter(filter).qos(MqttQos.AT_LEAST_ONCE).send();
            // Retained messages are sent on SUBSCRIBE, before anything published after it.
            client().publishWith().topic(markerTopic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            List<String> seen = new ArrayList<>();
            while (true) {
                Mqtt5Publish p = Received.next(publishes);
                if (p.getTopic().toString().equals(markerTopic)) {
                    return seen;
                }
                // Only retained messages: a retained PUBLISH (or a deletion) acknowledged just before
                // the SUBSCRIBE but routed after it also arrives live, with the RETAIN flag 0
                // [MQTT-3.3.1-9]; QoS 1 allows that second copy.
                if (p.isRetain()) {
                    seen.add(p.getTopic().toString());
                }
            }
        } finally {
            sub.disconnect();
        }
    }

    @Test
    void retainedMessagesAreListedByFilterSortedAndPagedWithTheirProperties() throws Exception {
        String base = base();
        Mqtt5BlockingClient c = client();
        retain(c, base + "/b", "two");
        retain(c, base + "/a", "one");
        retain(c, base + "/c/deep", "{\"x\":1}");
        c.publishWith().topic(base + "/d").qos(MqttQos.AT_LEAST_ONCE).retain(true)
                .payload(new byte[] {0, (byte) 0xFF, 7})
                .contentType("application/octet-stream").messageExpiryInterval(3600)
                .userProperties().add("origin", "lab").add("origin", "bench").applyUserProperties()
                .responseTopic(base + "/reply").correlationData(new byte[] {9, 8})
                .send();
        c.publishWith().topic(base + "/e").qos(MqttQos.AT_LEAST_ONCE).retain(true)
                .payload("héllo".getBytes(StandardCharsets.UTF_8))
                .payloadFormatIndicator(Mqtt5PayloadFormatIndicator.UTF_8).contentType("text/plain").send();

        JsonNode all = body(send("GET", PATH + "?filter=" + encoded(base + "/#"), null));
        assertEquals(5, all.path("total").asInt(), all.toString());
        List<String> topics = new ArrayList<>();
        all.path("items").forEach(i -> topics.add(i.path("topic").asText()));
        assertEquals(List.of(base + "/a", base + "/b", base + "/c/deep", base + "/d", base + "/e"), topics);

        JsonNode a = all.path("items").get(0);
        assertEquals("one", a.path("payload").asText());
        assertEquals("utf8", a.path("encoding").asText());
        assertEquals(1, a.path("qos").asInt());
        assertEquals(3, a.path("payloadSize").asInt());
        assertFalse(a.path("storedAt").asText().isEmpty(), a.toString());
        assertTrue(a.path("properties").path("messageExpiryInterval").isNull(), a.toString());

        JsonNode d = all.path("items").get(3);
        assertEquals("base64", d.path("encoding").asText(), d.toString());
        assertArrayEquals(new byte[] {0, (byte) 0xFF, 7}, Base64.getDecoder().decode(d.path("payload").asText()));
        JsonNode props = d.path("properties");
        assertEquals("application/octet-stream", props.path("contentType").asText());
        long left = props.path("messageExpiryInterval").asLong();
        assertTrue(left > 3500 && left <= 3600, props.toString());
        assertEquals(base + "/reply", props.path("responseTopic").asText());
        assertArrayEquals(new byte[] {9, 8}, Base64.getDecoder().decode(props.path("correlationData").asText()));
        assertEquals("origin", props.path("userProperties").get(0).path("name").asText());
        assertEquals("bench", props.path("userProperties").get(1).path("value").asText());

        JsonNode e = all.path("items").get(4);
        assertEquals("héllo", e.path("payload").asText());
        assertEquals("utf8", e.path("encoding").asText());
        assertEquals(1, e.path("properties").path("payloadFormatIndicator").asInt());

        JsonNode page1 = body(send("GET", PATH + "?filter=" + encoded(base + "/#") + "&page=1&pageSize=2", null));
        assertEquals(5, page1.path("total").asInt());
        assertEquals(1, page1.path("page").asInt());
        assertEquals(2, page1.path("pageSize").asInt());
        assertEquals(base + "/c/deep", page1.path("items").get(0).path("topic").asText());
        assertEquals(base + "/d", page1.path("items").get(1).path("topic").asText());
        JsonNode page3 = body(send("GET", PATH + "?filter=" + encoded(base + "/#") + "&page=3&pageSize=2", null));
        assertEquals(0, page3.path("items").size());

        JsonNode oneLevel = body(send("GET", PATH + "?filter=" + encoded(base + "/+"), null));
        assertEquals(4, oneLevel.path("total").asInt(), "'+' matches one level only: " + oneLevel);

        JsonNode everything = body(send("GET", PATH + "?pageSize=1000", null));
        assertTrue(everything.path("total").asInt() >= 5, "the default filter is '#': " + everything);
    }

    @Test
    void aTopicIsReadByItsUrlEncodedNameWithSlashesSpacesAndPlus() {
        String topic = base() + "/with space/and more/";
        Mqtt5BlockingClient c = client();
        retain(c, topic, "found");
        // URLEncoder: '/' is %2F, ' ' is '+'
        HttpResponse<String> formEncoded = send("GET", PATH + "/" + encoded(topic), null);
        assertEquals(200, formEncoded.statusCode(), formEncoded.body());
        assertEquals(topic, body(formEncoded).path("topic").asText());
        assertEquals("found", body(formEncoded).path("payload").asText());
        // RFC 3986 style: ' ' is %20
        HttpResponse<String> percent = send("GET", PATH + "/" + encoded(topic).replace("+", "%20"), null);
        assertEquals(200, percent.statusCode(), percent.body());
        assertEquals(topic, body(percent).path("topic").asText());

        assertError(send("GET", PATH + "/" + encoded("a/+/b"), null), 400, "bad_request", "topic:");
        assertError(send("GET", PATH + "/" + encoded(base() + "/nothing here"), null), 404, "not_found", null);
        assertError(send("DELETE", PATH + "/" + encoded(base() + "/nothing"), null), 404, "not_found", null);
    }

    @Test
    void deletingOneTopicRemovesItForNewSubscribers() throws Exception {
        String base = base();
        Mqtt5BlockingClient c = client();
        retain(c, base + "/gone", "x");
        retain(c, base + "/kept", "y");
        assertEquals(List.of(base + "/gone", base + "/kept"),
                retainedSeenBy(base + "/#", base + "/marker").stream().sorted().toList());

        HttpResponse<String> deleted = send("DELETE", PATH + "/" + encoded(base + "/gone"), null);
        assertEquals(204, deleted.statusCode(), deleted.body());
        assertError(send("GET", PATH + "/" + encoded(base + "/gone"), null), 404, "not_found", null);
        assertEquals(List.of(base + "/kept"), retainedSeenBy(base + "/#", base + "/marker"));
        assertError(send("DELETE", PATH + "/" + encoded(base + "/gone"), null), 404, "not_found", null);
    }

    @Test
    void deletingByFilterRemovesEveryMatchAndSaysHowMany() throws Exception {
        String base = base();
        Mqtt5BlockingClient c = client();
        retain(c, base + "/x/1", "1");
        retain(c, base + "/x/2", "2");
        retain(c, base + "/x/3/deeper", "3");
        retain(c, base + "/y", "4");

        HttpResponse<String> r = send("DELETE", PATH + "?filter=" + encoded(base + "/x/#"), null);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(3, body(r).path("deleted").asInt());
        JsonNode left = body(send("GET", PATH + "?filter=" + encoded(base + "/#"), null));
        assertEquals(1, left.path("total").asInt(), left.toString());
        assertEquals(base + "/y", left.path("items").get(0).path("topic").asText());
        assertEquals(List.of(base + "/y"), retainedSeenBy(base + "/#", base + "/marker"));

        assertError(send("DELETE", PATH, null), 400, "bad_request", "filter:");
        assertError(send("DELETE", PATH + "?filter=" + encoded("a/#/b"), null), 400, "bad_request", "filter:");
    }

    @Test
    void aQos1PublishReachesASubscriberAndIsRetainedWhenAsked() throws Exception {
        String base = base();
        Mqtt5BlockingClient sub = client();
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter(base + "/#").qos(MqttQos.AT_LEAST_ONCE).send();
            Map<String, Object> m = message(base + "/cmd", "reboot");
            m.put("qos", 1);
            m.put("properties", Map.of("contentType", "text/plain", "payloadFormatIndicator", 1,
                    "messageExpiryInterval", 600, "responseTopic", base + "/answers",
                    "correlationData", Base64.getEncoder().encodeToString(new byte[] {4, 2}),
                    "userProperties", List.of(Map.of("name", "by", "value", "operator"))));
            HttpResponse<String> r = send("POST", "/api/v1/publish", m);
            assertEquals(200, r.statusCode(), r.body());
            JsonNode stored = body(r);
            assertTrue(stored.path("partition").asInt() >= 0 && stored.path("offset").asLong() >= 0, r.body());
            assertEquals(6, stored.path("payloadSize").asInt());

            Mqtt5Publish p = Received.next(publishes);
            assertEquals(base + "/cmd", p.getTopic().toString());
            assertEquals("reboot", new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8));
            assertEquals(MqttQos.AT_LEAST_ONCE, p.getQos());
            assertFalse(p.isRetain());
            assertEquals("text/plain", p.getContentType().orElseThrow().toString());
            assertEquals(base + "/answers", p.getResponseTopic().orElseThrow().toString());
            assertEquals("operator", p.getUserProperties().asList().get(0).getValue().toString());
            assertTrue(p.getMessageExpiryInterval().orElseThrow() <= 600);
            assertError(send("GET", PATH + "/" + encoded(base + "/cmd"), null), 404, "not_found", null);

            Map<String, Object> retained = message(base + "/state",
                    Base64.getEncoder().encodeToString(new byte[] {1, 2, 3}));
            retained.put("payloadEncoding", "base64");
            retained.put("qos", 1);
            retained.put("retain", true);
            assertEquals(200, send("POST", "/api/v1/publish", retained).statusCode());
            assertEquals(base + "/state", Received.next(publishes).getTopic().toString());
        }
        JsonNode read = body(send("GET", PATH + "/" + encoded(base + "/state"), null));
        assertEquals("base64", read.path("encoding").asText(), read.toString());
        assertEquals("$admin", read.path("publisherId").asText());
        assertArrayEquals(new byte[] {1, 2, 3}, Base64.getDecoder().decode(read.path("payload").asText()));
        assertEquals(List.of(base + "/state"), retainedSeenBy(base + "/#", base + "/marker"));

        // An empty retained publish deletes, as from a client.
        Map<String, Object> empty = message(base + "/state", "");
        empty.put("retain", true);
        assertEquals(200, send("POST", "/api/v1/publish", empty).statusCode());
        assertError(send("GET", PATH + "/" + encoded(base + "/state"), null), 404, "not_found", null);
    }

    @Test
    void badInputIsRefusedNamingTheField() {
        assertError(send("GET", PATH + "?filter=" + encoded("a/#/b"), null), 400, "bad_request", "filter:");
        assertError(send("GET", PATH + "?filter=" + encoded("$share/g/a"), null), 400, "bad_request", "filter:");
        assertError(send("GET", PATH + "?pageSize=0", null), 400, "bad_request", "pageSize:");

        String publish = "/api/v1/publish";
        assertError(send("POST", publish, Map.of("payload", "x")), 400, "bad_request", "topic:");
        assertError(send("POST", publish, message("", "x")), 400, "bad_request", "topic:");
        assertError(send("POST", publish, message("a/+", "x")), 400, "bad_request", "topic:");
        assertError(send("POST", publish, message("a/#", "x")), 400, "bad_request", "topic:");
        Map<String, Object> qos = message("a/b", "x");
        qos.put("qos", 3);
        assertError(send("POST", publish, qos), 400, "bad_request", "qos:");
        Map<String, Object> encoding = message("a/b", "x");
        encoding.put("payloadEncoding", "hex");
        assertError(send("POST", publish, encoding), 400, "bad_request", "payloadEncoding:");
        Map<String, Object> base64 = message("a/b", "not base64!");
        base64.put("payloadEncoding", "base64");
        assertError(send("POST", publish, base64), 400, "bad_request", "payload:");
        Map<String, Object> notText = message("a/b", Base64.getEncoder().encodeToString(new byte[] {(byte) 0xFF}));
        notText.put("payloadEncoding", "base64");
        notText.put("properties", Map.of("payloadFormatIndicator", 1));
        assertError(send("POST", publish, notText), 400, "bad_request", "payload:");
        Map<String, Object> format = message("a/b", "x");
        format.put("properties", Map.of("payloadFormatIndicator", 2));
        assertError(send("POST", publish, format), 400, "bad_request", "properties.payloadFormatIndicator:");
        Map<String, Object> response = message("a/b", "x");
        response.put("properties", Map.of("responseTopic", "r/#"));
        assertError(send("POST", publish, response), 400, "bad_request", "properties.responseTopic:");
        Map<String, Object> expiry = message("a/b", "x");
        expiry.put("properties", Map.of("messageExpiryInterval", 4_294_967_296L));
        assertError(send("POST", publish, expiry), 400, "bad_request", "properties.messageExpiryInterval:");
        Map<String, Object> user = message("a/b", "x");
        user.put("properties", Map.of("userProperties", List.of(Map.of("value", "v"))));
        assertError(send("POST", publish, user), 400, "bad_request", "properties.userProperties[0].name:");
        Map<String, Object> correlation = message("a/b", "x");
        correlation.put("properties", Map.of("correlationData", "%%%"));
        assertError(send("POST", publish, correlation), 400, "bad_request", "properties.correlationData:");
        assertError(send("POST", publish, message("a/b", "x".repeat(MAX_PACKET_SIZE))), 400, "bad_request",
                "payload:");
        Map<String, Object> unknown = message("a/b", "x");
        unknown.put("retained", true);
        assertError(send("POST", publish, unknown), 400, "bad_request", "retained:");
        assertError(send("POST", publish, "not json"), 400, "bad_request", "body:");
    }

    @Test
    void theOperationsAreInTheOpenApiDocument() {
        String doc = node.get("/api/v1/openapi.json", null).body();
        for (String path : List.of("\"/api/v1/retained\"", "\"/api/v1/retained/{topic}\"", "\"/api/v1/publish\"",
                "\"/api/v1/cluster/nodes\"", "\"/api/v1/cluster/nodes/{id}/drain\"")) {
            assertTrue(doc.contains(path), path + " in " + doc.substring(0, Math.min(200, doc.length())));
        }
    }
}
