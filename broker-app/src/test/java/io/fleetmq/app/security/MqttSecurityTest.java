package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node with anonymous clients refused and credentials in PostgreSQL: CONNECT answers (MQTT 5 and
 * 3.1.1), rules on PUBLISH, SUBSCRIBE and the will, placeholders that cannot be widened, blocked
 * clients, the log of refused connections, and changes applied to connected clients.
 */
class MqttSecurityTest {

    @TempDir
    static Path dataDir;
    static PrivateDatabase db;
    static TestBroker broker;
    static SecurityFixture fx;

    @BeforeAll
    static void start() {
        fx = SecurityFixture.startNode(dataDir, Map.of());
        db = fx.db;
        broker = fx.broker();
    }

    @AfterAll
    static void stop() {
        if (fx != null) {
            fx.close();
        }
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static int port() {
        return broker.mqttPort();
    }

    /** A connection allowed to subscribe to everything, subscribed to {@code filter}. */
    private static SecurityFixture.Connected watcher(String filter) throws IOException {
        String user = unique("watcher");
        fx.credential(user, null, "watch", List.of(), List.of("#"));
        SecurityFixture.Connected w = SecurityFixture.connect(port(), 5, unique("w"), user, "watch").expect(0x00);
        assertEquals(0x01, SecurityFixture.subscribeV5(w.raw(), 1, filter, 1));
        return w;
    }

    @Test
    @DisplayName("CONNECT with the right password is accepted; a wrong password or unknown user gets 0x86 (3.1.1: 4), never saying which")
    void passwords() throws Exception {
        String user = unique("dev");
        fx.credential(user, null, "s3cret", List.of(), List.of());
        try (var ok = SecurityFixture.connect(port(), 5, unique("c"), user, "s3cret")) {
            ok.expect(0x00);
        }
        try (var wrong = SecurityFixture.connect(port(), 5, unique("c"), user, "nope")) {
            wrong.expect(0x86);
            assertTrue(wrong.raw().closedByBroker());
        }
        try (var unknown = SecurityFixture.connect(port(), 5, unique("c"), unique("nobody"), "s3cret")) {
            unknown.expect(0x86);
        }
        try (var v3wrong = SecurityFixture.connect(port(), 4, unique("c"), user, "nope")) {
            v3wrong.expect(4);
        }
        try (var v3ok = SecurityFixture.connect(port(), 4, unique("c"), user, "s3cret")) {
            v3ok.expect(0);
        }
        try (var noPassword = SecurityFixture.connect(port(), 5, unique("c"), user, null)) {
            noPassword.expect(0x86);
        }
    }

    @Test
    @DisplayName("MQTT_ALLOW_ANONYMOUS=false: a CONNECT without credentials gets 0x87 (3.1.1: 5), recorded as anonymous_refused")
    void anonymousRefused() throws Exception {
        String clientId = unique("anon");
        try (var v5 = SecurityFixture.connect(port(), 5, clientId, null, null)) {
            v5.expect(0x87);
        }
        try (var v3 = SecurityFixture.connect(port(), 4, clientId, null, null)) {
            v3.expect(5);
        }
        Await.until(Duration.ofSeconds(10), "the refusals in the log", () -> {
            var page = fx.refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 10);
            return page.total() == 1 && page.items().get(0).count() == 2;
        });
        RefusedConnection logged = fx.refused.list(new RefusedConnections.Filter(clientId, null, null, null), 0, 10)
                .items().get(0);
        assertEquals(RefusedConnection.ANONYMOUS_REFUSED, logged.reason());
        assertEquals("127.0.0.1", logged.address());
        assertTrue(!logged.passwordGiven() && !logged.tls());
        assertTrue(refusedTotal("anonymous_refused") >= 2);
    }

    @Test
    @DisplayName("A credential by client ID alone, without password, lets that client ID in and no other")
    void clientIdCredential() throws Exception {
        String clientId = unique("sensor");
        fx.credential(null, clientId, null, List.of(), List.of());
        SecurityFixture.connect(port(), 5, clientId, null, null).expect(0x00).close();
        SecurityFixture.connect(port(), 5, clientId + "x", null, null).expect(0x87).close();
    }

    @Test
    @DisplayName("A Mosquitto $7$ (PBKDF2-SHA512) hash made by mosquitto_passwd authenticates its password, and no other")
    void mosquittoHash() throws Exception {
        String user = unique("device-7");
        // mosquitto_passwd -c -b pw7 device-7 'correct horse 7' (Mosquitto 2.0.11)
        String hash = "$7$101$Z0N4gvcrKFLO0BeX$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==";
        Credential c = fx.credentials.create(new io.fleetmq.persistence.security.Credentials.Input(
                Credential.BASIC, user, null, hash, null, List.of(), List.of()));
        fx.announce(new io.fleetmq.core.security.SecurityChange(io.fleetmq.core.security.SecurityChange.Kind.CREDENTIAL,
                c.id(), false, false));
        SecurityFixture.connect(port(), 5, unique("m"), user, "correct horse 7").expect(0x00).close();
        SecurityFixture.connect(port(), 5, unique("m"), user, "correct horse 8").expect(0x86).close();
    }

    @Test
    @DisplayName("PUBLISH not allowed: MQTT 5 QoS 1 gets PUBACK 0x87, QoS 0 is dropped, 3.1.1 QoS 1 is acknowledged and dropped; all counted, none delivered")
    void publishRules() throws Exception {
        String user = unique("pub");
        String base = unique("site");
        fx.credential(user, null, "pw", List.of(base + "/allowed/#"), List.of());
        double before = broker.dropped("not_authorized");
        try (var w = watcher(base + "/#");
                var v5 = SecurityFixture.connect(port(), 5, unique("p"), user, "pw").expect(0x00);
                var v3 = SecurityFixture.connect(port(), 4, unique("p"), user, "pw").expect(0)) {
            assertEquals(0x87, SecurityFixture.publishQos1V5(v5.raw(), 1, base + "/denied", "x"));
            v5.raw().send(RawMqtt.publishV5(base + "/denied", 0, 0, new byte[] {1}));
            v3.raw().send(v311Publish(base + "/denied", 7));
            byte[] puback = v3.raw().readType(4);
            assertEquals(7, puback[3] & 0xFF, "3.1.1 PUBACK of the dropped PUBLISH");
            assertEquals(0x00, SecurityFixture.publishQos1V5(v5.raw(), 2, base + "/allowed/a", "ok"));
            byte[] delivered = w.raw().readType(3);
            assertEquals(base + "/allowed/a", RawMqtt.publishTopic(delivered), "only the allowed PUBLISH arrives");
            assertArrayEquals(RawMqtt.NOTHING, w.raw().readWithin(300));
        }
        assertEquals(before + 3, broker.dropped("not_authorized"));
    }

    @Test
    @DisplayName("SUBSCRIBE not allowed gets 0x87 for that filter (3.1.1: 0x80); a shared subscription is checked on its filter")
    void subscribeRules() throws Exception {
        String user = unique("sub");
        String base = unique("plant");
        fx.credential(user, null, "pw", List.of(), List.of(base + "/+/temperature"));
        try (var v5 = SecurityFixture.connect(port(), 5, unique("s"), user, "pw").expect(0x00);
                var v3 = SecurityFixture.connect(port(), 4, unique("s"), user, "pw").expect(0)) {
            assertEquals(0x01, SecurityFixture.subscribeV5(v5.raw(), 1, base + "/a/temperature", 1));
            assertEquals(0x01, SecurityFixture.subscribeV5(v5.raw(), 2, base + "/+/temperature", 1));
            assertEquals(0x87, SecurityFixture.subscribeV5(v5.raw(), 3, base + "/#", 1));
            assertEquals(0x87, SecurityFixture.subscribeV5(v5.raw(), 4, base + "/a/pressure", 1));
            assertEquals(0x01, SecurityFixture.subscribeV5(v5.raw(), 5, "$share/g/" + base + "/b/temperature", 1));
            assertEquals(0x87, SecurityFixture.subscribeV5(v5.raw(), 6, "$share/g/" + base + "/#", 1));
            v3.raw().send(v311Subscribe(9, base + "/#"));
            byte[] suback = v3.raw().readType(9);
            assertEquals(0x80, suback[4] & 0xFF);
        }
    }

    @Test
    @DisplayName("Placeholders: ${clientid} and ${username} stand for a whole level; values with + # / widen nothing")
    void placeholders() throws Exception {
        String user = unique("u");
        fx.credential(user, null, "pw", List.of("devices/${clientid}/up"), List.of("devices/${clientid}/down",
                "users/${username}/#"));
        String clientId = unique("d");
        try (var c = SecurityFixture.connect(port(), 5, clientId, user, "pw").expect(0x00)) {
            assertEquals(0x01, SecurityFixture.subscribeV5(c.raw(), 1, "devices/" + clientId + "/down", 1));
            assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 2, "devices/other/down", 1));
            assertEquals(0x01, SecurityFixture.subscribeV5(c.raw(), 3, "users/" + user + "/x", 1));
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 4, "devices/" + clientId + "/up", "1"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(c.raw(), 5, "devices/other/up", "1"));
        }
        // A client ID of "+" or "#" would turn the rule into a wildcard: the rule matches nothing instead.
        for (String injected : List.of("+", "#")) {
            try (var c = SecurityFixture.connect(port(), 5, injected, user, "pw").expect(0x00)) {
                assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 1, "devices/+/down", 1), injected);
                assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 2, "devices/#", 1), injected);
            }
        }
        String slashy = unique("x") + "/#";
        fx.credential(slashy, null, "pw", List.of(), List.of("users/${username}/#"));
        try (var c = SecurityFixture.connect(port(), 5, unique("d"), slashy, "pw").expect(0x00)) {
            assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 1, "users/" + slashy, 1));
            assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 2, "users/#", 1));
        }
    }

    @Test
    @DisplayName("A will to a topic its client may not publish to is not published, and counted")
    void willChecked() throws Exception {
        String user = unique("will");
        String base = unique("w");
        fx.credential(user, null, "pw", List.of(base + "/ok"), List.of());
        double before = broker.dropped("not_authorized");
        try (var w = watcher(base + "/#")) {
            RawMqtt c = RawMqtt.connect(port());
            c.send(connectWithWill(unique("wc"), user, "pw", base + "/forbidden"));
            assertEquals(0x00, c.readType(2)[3]);
            c.close(); // no DISCONNECT: the will is due
            Await.until(Duration.ofSeconds(10), "the will counted as not authorized",
                    () -> broker.dropped("not_authorized") >= before + 1);
            assertArrayEquals(RawMqtt.NOTHING, w.raw().readWithin(500), "the will is not delivered");
        }
    }

    @Test
    @DisplayName("Blocked by client ID, user name, address range or regular expression: CONNACK 0x8A (3.1.1: 5); a connected client is disconnected; unblocking lets it back")
    void blocked() throws Exception {
        String user = unique("b");
        fx.credential(user, null, "pw", List.of(), List.of());
        String clientId = unique("blocked");
        try (var c = SecurityFixture.connect(port(), 5, clientId, user, "pw").expect(0x00)) {
            BlockEntry e = fx.block(BlockEntry.CLIENT_ID, clientId, null, null);
            byte[] disconnect = c.raw().readType(14);
            assertEquals(0x98, disconnect[2] & 0xFF, "DISCONNECT 0x98 Administrative action");
            SecurityFixture.connect(port(), 5, clientId, user, "pw").expect(0x8A).close();
            SecurityFixture.connect(port(), 4, clientId, user, "pw").expect(5).close();
            fx.unblock(e);
            Await.until(Duration.ofSeconds(10), "unblocked", () -> codeOf(clientId, user) == 0);
        }
        BlockEntry byUser = fx.block(BlockEntry.USERNAME, user, null, null);
        awaitRefused(unique("x"), user, 0x8A);
        fx.unblock(byUser);
        String prefix = unique("rx");
        BlockEntry regex = fx.block(BlockEntry.REGEX, java.util.regex.Pattern.quote(prefix) + "-.*", BlockEntry.CLIENT_ID, null);
        awaitRefused(prefix + "-1", user, 0x8A);
        SecurityFixture.connect(port(), 5, prefix + "1", user, "pw").expect(0x00).close();
        fx.unblock(regex);
        BlockEntry expired = fx.block(BlockEntry.CLIENT_ID, clientId, null, Instant.now().plusMillis(1500));
        awaitRefused(clientId, user, 0x8A);
        Await.until(Duration.ofSeconds(10), "the block expired", () -> codeOf(clientId, user) == 0);
        fx.unblock(expired);
        assertTrue(refusedTotal("blocked") >= 4);
        Await.until(Duration.ofSeconds(10), "blocked refusals in the log", () -> fx.refused.list(
                new RefusedConnections.Filter(clientId, null, null, RefusedConnection.BLOCKED), 0, 10).total() == 1);
    }

    @Test
    @DisplayName("IP ranges: a CIDR block covering the client's address refuses it")
    void blockedRange() throws Exception {
        String user = unique("r");
        fx.credential(user, null, "pw", List.of(), List.of());
        BlockEntry range = fx.block(BlockEntry.IP, "127.0.0.0/8", null, null);
        try {
            awaitRefused(unique("r"), user, 0x8A);
        } finally {
            fx.unblock(range);
        }
        Await.until(Duration.ofSeconds(10), "range unblocked", () -> codeOf(unique("r"), user) == 0);
    }

    @Test
    @DisplayName("Rules changed while connected: the next PUBLISH and SUBSCRIBE use them, subscriptions they forbid are removed")
    void rulesChange() throws Exception {
        String user = unique("rc");
        String base = unique("rc");
        Credential cred = fx.credential(user, null, "pw", List.of(base + "/#"), List.of(base + "/#"));
        try (var c = SecurityFixture.connect(port(), 5, unique("rc"), user, "pw").expect(0x00)) {
            assertEquals(0x01, SecurityFixture.subscribeV5(c.raw(), 1, base + "/news", 1));
            // Its own message comes back on the same connection, before or after the PUBACK.
            c.raw().send(RawMqtt.publishV5(base + "/news", 1, 2, "one".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            byte[] puback = null;
            byte[] delivered = null;
            while (puback == null || delivered == null) {
                byte[] p = c.raw().read();
                assertTrue(p != null, "connection closed");
                if ((p[0] & 0xF0) == 0x40) {
                    puback = p;
                } else if ((p[0] & 0xF0) == 0x30) {
                    delivered = p;
                }
            }
            assertTrue(puback[1] < 3 || puback[4] == 0, "PUBACK success");
            assertEquals(base + "/news", RawMqtt.publishTopic(delivered));
            fx.update(cred, List.of(base + "/other"), List.of(base + "/other"));
            int[] id = {10};
            Await.until(Duration.ofSeconds(5), "the new publish rules", () -> {
                try {
                    return SecurityFixture.publishQos1V5(c.raw(), id[0]++, base + "/news", "two") == 0x87;
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            assertEquals(0x87, SecurityFixture.subscribeV5(c.raw(), 3, base + "/news", 1));
            // The old subscription is gone: a message another client publishes there does not arrive.
            try (var w = watcher(base + "/news")) {
                String user2 = unique("p2");
                fx.credential(user2, null, "pw", List.of(base + "/#"), List.of());
                try (var p = SecurityFixture.connect(port(), 5, unique("p2"), user2, "pw").expect(0x00)) {
                    assertEquals(0x00, SecurityFixture.publishQos1V5(p.raw(), 1, base + "/news", "three"));
                }
                assertEquals(base + "/news", RawMqtt.publishTopic(w.raw().readType(3)), "the watcher gets it");
                // Copies of "two", published while the old rules held, may still be on their way.
                for (byte[] next = c.raw().readWithin(500); next != RawMqtt.NOTHING; next = c.raw().readWithin(500)) {
                    assertTrue(next != null, "connection closed");
                    assertTrue((next[0] & 0xF0) != 0x30 || !"three".equals(new String(RawMqtt.parsePublishV5(next).payload(),
                            java.nio.charset.StandardCharsets.UTF_8)), "no PUBLISH for the removed subscription");
                }
            }
        }
    }

    @Test
    @DisplayName("A deleted credential disconnects the clients that used it with 0x87; they cannot come back")
    void credentialDeleted() throws Exception {
        String user = unique("del");
        Credential cred = fx.credential(user, null, "pw", List.of(), List.of());
        try (var c = SecurityFixture.connect(port(), 5, unique("del"), user, "pw").expect(0x00)) {
            fx.delete(cred);
            byte[] disconnect = c.raw().readType(14);
            assertEquals(0x87, disconnect[2] & 0xFF);
        }
        SecurityFixture.connect(port(), 5, unique("del"), user, "pw").expect(0x86).close();
    }

    @Test
    @DisplayName("A credential's client type overrides the client ID pattern: an APPLICATION session gets its Kafka backlog topic")
    void clientTypeFromCredential() throws Exception {
        String user = unique("app");
        String clientId = unique("plain"); // DEVICE by the default pattern
        Credential app = fx.credentials.create(new io.fleetmq.persistence.security.Credentials.Input(Credential.BASIC,
                user, null, SecurityFixture.HASHES.hash("pw".toCharArray()), "APPLICATION", List.of(), List.of("#")));
        fx.announce(new io.fleetmq.core.security.SecurityChange(io.fleetmq.core.security.SecurityChange.Kind.CREDENTIAL,
                app.id(), false, false));
        RawMqtt raw = RawMqtt.connect(port());
        // MQTT 5 CONNECT with Session Expiry Interval 3600 (property 0x11), user name and password.
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        RawMqtt.writeString(body, "MQTT");
        body.write(5);
        body.write(0x02 | 0x80 | 0x40);
        body.write(0);
        body.write(60);
        body.writeBytes(new byte[] {5, 0x11, 0, 0, 0x0E, 0x10});
        RawMqtt.writeString(body, clientId);
        RawMqtt.writeString(body, user);
        RawMqtt.writeString(body, "pw");
        raw.send(RawMqtt.packet(0x10, body.toByteArray()));
        assertEquals(0x00, raw.readType(2)[3]);
        String topic = new io.fleetmq.kafka.BrokerTopics(broker.node().kafkaSettings().topicPrefix()).app(clientId);
        try (var admin = org.apache.kafka.clients.admin.Admin.create(Map.of("bootstrap.servers",
                broker.node().kafkaSettings().bootstrapServers()))) {
            Await.until(Duration.ofSeconds(20), "the APPLICATION backlog topic " + topic, () -> {
                try {
                    return admin.listTopics().names().get().contains(topic);
                } catch (Exception e) {
                    return false;
                }
            });
        }
        raw.close();
    }

    private static void awaitRefused(String clientId, String user, int code) {
        Await.until(Duration.ofSeconds(10), "CONNACK " + code + " for " + clientId, () -> codeOf(clientId, user) == code);
    }

    /** The CONNACK code a CONNECT with password "pw" gets. */
    private static int codeOf(String clientId, String user) {
        try (var c = SecurityFixture.connect(port(), 5, clientId, user, "pw")) {
            return c.code();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static double refusedTotal(String reason) {
        String scrape = broker.scrapeMetrics();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "^fleetmq_connections_refused_total\\{[^}]*reason=\"" + reason + "\"[^}]*\\} (\\S+)$",
                java.util.regex.Pattern.MULTILINE).matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    private static byte[] v311Publish(String topic, int packetId) {
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        RawMqtt.writeString(body, topic);
        body.write(packetId >> 8);
        body.write(packetId & 0xFF);
        body.write('x');
        return RawMqtt.packet(0x32, body.toByteArray());
    }

    private static byte[] v311Subscribe(int packetId, String filter) {
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        body.write(packetId >> 8);
        body.write(packetId & 0xFF);
        RawMqtt.writeString(body, filter);
        body.write(1);
        return RawMqtt.packet(0x82, body.toByteArray());
    }

    private static byte[] connectWithWill(String clientId, String user, String password, String willTopic) {
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        RawMqtt.writeString(body, "MQTT");
        body.write(5);
        body.write(0x02 | 0x04 | 0x08 | 0x80 | 0x40); // clean start, will QoS 1, user name, password
        body.write(0);
        body.write(60);
        body.write(0); // no properties
        RawMqtt.writeString(body, clientId);
        body.write(0); // no will properties
        RawMqtt.writeString(body, willTopic);
        RawMqtt.writeString(body, "gone");
        RawMqtt.writeString(body, user);
        RawMqtt.writeString(body, password);
        return RawMqtt.packet(0x10, body.toByteArray());
    }

    @SuppressWarnings("unused")
    private static void unused() {
        assertNull(null);
        assertNotNull("");
    }
}
