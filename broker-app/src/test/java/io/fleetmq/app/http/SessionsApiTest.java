package io.fleetmq.app.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.AdminHttp;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
 * {@code /api/v1/sessions} and {@code /api/v1/subscriptions} on one node, with real clients:
 * listing, filters and paging; one session in detail; a persistent DEVICE session's queue; ending
 * and disconnecting sessions; the error answers.
 */
class SessionsApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    static PrivateDatabase db;
    static TestBroker broker;
    static String token;
    static final List<AutoCloseable> clients = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        db = PrivateDatabase.create();
        Map<String, String> env = new HashMap<>(db.env());
        env.put("ADMIN_PASSWORD", "operator-pw");
        env.put("BROKER_NODE_ID", "api-1");
        env.put("APPLICATION_CLIENT_ID_PATTERN", "app-.*");
        broker = TestBroker.start(dir, env);
        HttpResponse<String> login = AdminHttp.send(broker.node().httpPort(), null, "POST", "/api/v1/auth/login",
                "{\"username\":\"admin\",\"password\":\"operator-pw\"}");
        assertEquals(200, login.statusCode(), login.body());
        token = JSON.readTree(login.body()).get("token").asText();
        HttpResponse<String> created = call("POST", "/api/v1/credentials", "{\"type\":\"basic\",\"username\":\"alice\","
                + "\"password\":\"pw\",\"publish\":[\"#\"],\"subscribe\":[\"#\"]}");
        assertEquals(201, created.statusCode(), created.body());
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : clients) {
            try {
                c.close();
            } catch (Exception ignored) {
                // the broker may have closed it
            }
        }
        if (broker != null) {
            broker.close();
        }
        if (db != null) {
            db.close();
        }
    }

    static HttpResponse<String> call(String method, String path, String body) {
        return AdminHttp.send(broker.node().httpPort(), token, method, path, body);
    }

    static JsonNode get(String path) {
        HttpResponse<String> r = call("GET", path, null);
        assertEquals(200, r.statusCode(), r.body());
        try {
            return JSON.readTree(r.body());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static List<String> ids(JsonNode page) {
        List<String> ids = new ArrayList<>();
        page.get("items").forEach(i -> ids.add(i.get("clientId").asText()));
        return ids;
    }

    static String enc(String clientId) {
        return URLEncoder.encode(clientId, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static String unique(String prefix) {
        return prefix + UUID.randomUUID().toString().substring(0, 8);
    }

    /** An MQTT 5 client that authenticates as alice once the credential is known to the node. */
    static Mqtt5BlockingClient alice(String clientId, boolean will) {
        var builder = Mqtt5Client.builder().identifier(clientId).serverHost("127.0.0.1").serverPort(broker.mqttPort())
                .simpleAuth().username("alice").password("pw".getBytes(StandardCharsets.UTF_8)).applySimpleAuth();
        if (will) {
            builder = builder.willPublish().topic("wills/" + clientId).qos(MqttQos.AT_LEAST_ONCE).retain(true)
                    .delayInterval(5).payload("bye".getBytes(StandardCharsets.UTF_8)).applyWillPublish();
        }
        Mqtt5BlockingClient c = builder.buildBlocking();
        Await.until(Duration.ofSeconds(10), "alice may connect", () -> {
            try {
                c.connectWith().keepAlive(30).send();
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        });
        clients.add(c::disconnect);
        return c;
    }

    @Test
    @DisplayName("Lists sessions in client ID order with paging and every filter")
    void listFiltersAndPages() throws Exception {
        String p = unique("ls-");
        Mqtt5BlockingClient a = broker.connectedV5(p + "a");
        clients.add(a::disconnect);
        alice(p + "b", false);
        Mqtt3BlockingClient c = broker.v3(p + "c");
        c.connect();
        clients.add(c::disconnect);
        Mqtt5BlockingClient d = broker.v5(p + "d/slash");
        d.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        d.disconnect(); // offline, persistent
        String app = unique("app-ls-");
        Mqtt5BlockingClient e = broker.connectedV5(app);
        clients.add(e::disconnect);

        Await.until(Duration.ofSeconds(10), "the offline session listed as offline", () -> {
            JsonNode off = get("/api/v1/sessions?connected=false&clientIdPrefix=" + p);
            return ids(off).equals(List.of(p + "d/slash"));
        });
        JsonNode all = get("/api/v1/sessions?clientIdPrefix=" + p);
        assertEquals(List.of(p + "a", p + "b", p + "c", p + "d/slash"), ids(all));
        assertEquals(4, all.get("total").asInt());
        JsonNode first = all.get("items").get(0);
        assertEquals("api-1", first.get("node").asText());
        assertTrue(first.get("connected").asBoolean());
        assertEquals("127.0.0.1", first.get("address").asText());
        assertEquals("5", first.get("protocol").asText());
        assertEquals("DEVICE", first.get("clientType").asText());
        assertFalse(first.get("connectedAt").isNull());
        assertFalse(first.get("persistent").asBoolean());
        assertEquals(0, first.get("sessionExpirySeconds").asLong());
        assertEquals("3.1.1", all.get("items").get(2).get("protocol").asText());
        JsonNode offline = all.get("items").get(3);
        assertTrue(offline.get("persistent").asBoolean());
        assertEquals(300, offline.get("sessionExpirySeconds").asLong());
        assertFalse(offline.get("disconnectedAt").isNull());

        JsonNode page1 = get("/api/v1/sessions?pageSize=3&page=1&clientIdPrefix=" + p);
        assertEquals(List.of(p + "d/slash"), ids(page1));
        assertEquals(4, page1.get("total").asInt());
        assertEquals(1, page1.get("page").asInt());
        assertEquals(3, page1.get("pageSize").asInt());

        assertEquals(List.of(p + "a", p + "b", p + "c"),
                ids(get("/api/v1/sessions?connected=true&clientIdPrefix=" + p)));
        assertEquals(List.of(p + "b"), ids(get("/api/v1/sessions?username=alice&clientIdPrefix=" + p)));
        assertEquals(4, get("/api/v1/sessions?address=127.0.&clientIdPrefix=" + p).get("total").asInt());
        assertEquals(0, get("/api/v1/sessions?address=10.&clientIdPrefix=" + p).get("total").asInt());
        assertEquals(4, get("/api/v1/sessions?node=api-1&clientIdPrefix=" + p).get("total").asInt());
        assertEquals(0, get("/api/v1/sessions?node=elsewhere&clientIdPrefix=" + p).get("total").asInt());
        JsonNode apps = get("/api/v1/sessions?clientType=APPLICATION&clientIdPrefix=" + app);
        assertEquals(List.of(app), ids(apps));
        assertEquals("APPLICATION", apps.get("items").get(0).get("clientType").asText());
        assertEquals(0, get("/api/v1/sessions?clientType=APPLICATION&clientIdPrefix=" + p).get("total").asInt());
        // Without filters the whole cluster is listed, sorted.
        JsonNode unfiltered = get("/api/v1/sessions?pageSize=1000");
        List<String> sorted = new ArrayList<>(ids(unfiltered));
        List<String> expected = new ArrayList<>(sorted);
        java.util.Collections.sort(expected);
        assertEquals(expected, sorted);
        assertTrue(sorted.containsAll(List.of(p + "a", p + "d/slash", app)));

        for (String bad : List.of("pageSize=0", "page=-1", "connected=maybe", "clientType=GATEWAY")) {
            HttpResponse<String> r = call("GET", "/api/v1/sessions?" + bad, null);
            assertEquals(400, r.statusCode(), bad);
            assertTrue(JSON.readTree(r.body()).get("message").asText().startsWith(bad.substring(0, bad.indexOf('='))),
                    r.body());
        }
        assertEquals(401, AdminHttp.send(broker.node().httpPort(), null, "GET", "/api/v1/sessions", null).statusCode());
        assertEquals(401, AdminHttp.send(broker.node().httpPort(), "wrong", "GET", "/api/v1/subscriptions", null)
                .statusCode());
    }

    @Test
    @DisplayName("Shows a connected MQTT 5 client in detail: connection, subscriptions with options, will, in flight")
    void detailOfAConnectedClient() throws Exception {
        String id = unique("dt-") + "/with/slashes";
        Mqtt5BlockingClient c = alice(id, true);
        c.subscribeWith().addSubscription().topicFilter("dt/" + id + "/one").qos(MqttQos.AT_LEAST_ONCE).noLocal(true)
                .retainAsPublished(true).applySubscription().send();
        c.subscribeWith().addSubscription().topicFilter("$share/grp/dt/two").qos(MqttQos.EXACTLY_ONCE)
                .applySubscription().send();

        JsonNode s = get("/api/v1/sessions/" + enc(id));
        assertEquals(id, s.get("clientId").asText());
        assertEquals("api-1", s.get("node").asText());
        assertTrue(s.get("nodeAlive").asBoolean());
        assertTrue(s.get("connected").asBoolean());
        assertEquals("alice", s.get("username").asText());
        assertEquals("127.0.0.1", s.get("address").asText());
        assertEquals("5", s.get("protocol").asText());
        assertEquals(30, s.get("keepAliveSeconds").asInt());
        assertFalse(s.get("connectedAt").isNull());
        assertTrue(s.get("disconnectedAt").isNull());
        assertTrue(s.get("expiresAt").isNull());
        JsonNode will = s.get("will");
        assertEquals("wills/" + id, will.get("topic").asText());
        assertEquals(1, will.get("qos").asInt());
        assertTrue(will.get("retain").asBoolean());
        assertEquals(5, will.get("delaySeconds").asLong());
        assertEquals(3, will.get("payloadBytes").asInt());
        assertFalse(will.has("payload"));
        assertEquals(0, s.get("inFlight").asInt());
        assertTrue(s.get("inFlightKnownOn").isNull());
        assertTrue(s.get("queuedMessages").isNull());

        JsonNode subs = s.get("subscriptions");
        assertEquals(2, subs.size(), subs.toString());
        JsonNode one = subs.get(0).get("topicFilter").asText().equals("dt/two") ? subs.get(1) : subs.get(0);
        JsonNode two = one == subs.get(0) ? subs.get(1) : subs.get(0);
        assertEquals("dt/" + id + "/one", one.get("topicFilter").asText());
        assertEquals(1, one.get("qos").asInt());
        assertTrue(one.get("options").get("noLocal").asBoolean());
        assertTrue(one.get("options").get("retainAsPublished").asBoolean());
        assertEquals(0, one.get("options").get("retainHandling").asInt());
        assertTrue(one.get("sharedGroup").isNull());
        assertEquals("dt/two", two.get("topicFilter").asText());
        assertEquals("grp", two.get("sharedGroup").asText());
        assertEquals(2, two.get("qos").asInt());
        assertEquals("api-1", two.get("node").asText());

        // The same subscriptions in the cluster-wide listing, searched by text and by client.
        JsonNode byClient = get("/api/v1/subscriptions?clientId=" + enc(id));
        assertEquals(2, byClient.get("total").asInt());
        JsonNode byText = get("/api/v1/subscriptions?filter=" + enc(id + "/one"));
        assertEquals(1, byText.get("total").asInt());
        assertEquals(id, byText.get("items").get(0).get("clientId").asText());
        assertEquals(0, get("/api/v1/subscriptions?filter=" + enc(id + "/none")).get("total").asInt());

        // Characters a URL gives a meaning of their own come through encoded: '+', ' ', '%', '?', '#'.
        String odd = unique("odd+1 %?#/");
        try (RawMqtt raw = broker.rawV5(odd)) {
            Await.until(Duration.ofSeconds(5), "the odd client ID found by its encoded path",
                    () -> call("GET", "/api/v1/sessions/" + enc(odd), null).statusCode() == 200);
            assertEquals(odd, get("/api/v1/sessions/" + enc(odd)).get("clientId").asText());
        }

        HttpResponse<String> unknown = call("GET", "/api/v1/sessions/" + enc("no/such " + id), null);
        assertEquals(404, unknown.statusCode());
        assertEquals("not_found", JSON.readTree(unknown.body()).get("error").asText());
    }

    @Test
    @DisplayName("Counts a persistent DEVICE session's queue; ending the session drops it, counted as session_ended")
    void queuedMessagesAndEndingTheSession() throws Exception {
        String id = unique("q-");
        String topic = "q/" + id;
        Mqtt5BlockingClient sub = broker.v5(id);
        sub.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
        sub.disconnect();
        Mqtt5BlockingClient pub = broker.connectedV5(unique("qp-"));
        clients.add(pub::disconnect);
        for (int i = 0; i < 3; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
        }
        Await.until(Duration.ofSeconds(15), "three messages queued", () ->
                get("/api/v1/sessions/" + enc(id)).get("queuedMessages").asLong() == 3);
        JsonNode s = get("/api/v1/sessions/" + enc(id));
        assertFalse(s.get("connected").asBoolean());
        assertTrue(s.get("persistent").asBoolean());
        assertFalse(s.get("expiresAt").isNull());
        assertEquals(409, call("POST", "/api/v1/sessions/" + enc(id) + "/disconnect", null).statusCode());

        double before = broker.dropped("session_ended");
        assertEquals(204, call("DELETE", "/api/v1/sessions/" + enc(id), null).statusCode());
        Await.until(Duration.ofSeconds(10), "the session gone", () ->
                call("GET", "/api/v1/sessions/" + enc(id), null).statusCode() == 404
                        && get("/api/v1/sessions?clientIdPrefix=" + id).get("total").asInt() == 0
                        && get("/api/v1/subscriptions?clientId=" + id).get("total").asInt() == 0);
        Await.until(Duration.ofSeconds(10), "the queued messages counted as dropped",
                () -> broker.dropped("session_ended") >= before + 3);
        assertEquals(404, call("DELETE", "/api/v1/sessions/" + enc(id), null).statusCode());

        // The client comes back to a new session: nothing of the old one is left.
        Mqtt5BlockingClient again = broker.v5(id);
        assertFalse(again.connectWith().cleanStart(false).sessionExpiryInterval(300).send().isSessionPresent());
        again.disconnect();
    }

    @Test
    @DisplayName("Shows a persistent APPLICATION session's backlog lag in Kafka")
    void applicationBacklogLag() {
        String id = unique("app-lag-");
        String topic = "lag/" + id;
        Mqtt5BlockingClient app = broker.v5(id);
        app.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        app.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
        app.disconnect();
        Mqtt5BlockingClient pub = broker.connectedV5(unique("lagp-"));
        clients.add(pub::disconnect);
        for (int i = 0; i < 2; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
        }
        Await.until(Duration.ofSeconds(20), "two records in the backlog, not consumed",
                () -> get("/api/v1/sessions/" + enc(id)).path("backlogLag").asLong(-1) == 2);
        JsonNode s = get("/api/v1/sessions/" + enc(id));
        assertEquals("APPLICATION", s.get("clientType").asText());
        assertTrue(s.get("queuedMessages").isNull());
        assertEquals(204, call("DELETE", "/api/v1/sessions/" + enc(id), null).statusCode());
        Await.until(Duration.ofSeconds(10), "the APPLICATION session gone",
                () -> call("GET", "/api/v1/sessions/" + enc(id), null).statusCode() == 404);
    }

    @Test
    @DisplayName("Disconnects a client with 0x98 (3.1.1: closed); 409 when not connected, 404 when unknown")
    void disconnect() throws Exception {
        String id = unique("dc-");
        try (RawMqtt raw = broker.rawV5(id)) {
            Await.until(Duration.ofSeconds(5), "the session connected",
                    () -> call("GET", "/api/v1/sessions/" + enc(id), null).statusCode() == 200);
            assertEquals(202, call("POST", "/api/v1/sessions/" + enc(id) + "/disconnect", null).statusCode());
            byte[] disconnect = raw.readType(14);
            assertEquals(0x98, disconnect[2] & 0xFF, "DISCONNECT 0x98 Administrative action");
            assertTrue(raw.closedByBroker());
        }
        Await.until(Duration.ofSeconds(5), "the session gone with its connection (expiry 0)",
                () -> call("GET", "/api/v1/sessions/" + enc(id), null).statusCode() == 404);
        assertEquals(404, call("POST", "/api/v1/sessions/" + enc(id) + "/disconnect", null).statusCode());

        String v3 = unique("dc3-");
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV311(v3));
            raw.readType(2);
            Await.until(Duration.ofSeconds(5), "the 3.1.1 session listed",
                    () -> "3.1.1".equals(get("/api/v1/sessions?clientIdPrefix=" + v3).path("items").path(0)
                            .path("protocol").asText()));
            assertEquals(202, call("POST", "/api/v1/sessions/" + enc(v3) + "/disconnect", null).statusCode());
            assertTrue(raw.closedByBroker(), "a 3.1.1 connection is just closed");
        }
        assertNotNull(get("/api/v1/openapi.json").get("paths").get("/api/v1/sessions/{clientId}/disconnect"));
    }
}
