package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.core.security.scram.ScramAlgorithm;
import io.fleetmq.core.security.scram.ScramKeys;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * SCRAM-SHA-256 and SCRAM-SHA-512 as MQTT 5 enhanced authentication (4.12) through a node with
 * {@code AUTH_PROVIDERS=basic,scram} and anonymous clients refused, with a raw client that
 * implements the client side of SCRAM: the exchange, its refusals, re-authentication, and a
 * credential written through the admin API.
 */
class ScramAuthTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dataDir;
    static PrivateDatabase db;
    static TestBroker broker;
    static Credentials credentials;
    static String token;

    @BeforeAll
    static void start() throws Exception {
        db = PrivateDatabase.create();
        Map<String, String> env = new HashMap<>(db.env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("AUTH_PROVIDERS", "basic,scram");
        env.put("ADMIN_PASSWORD", "operator-pw");
        broker = TestBroker.start(dataDir, env);
        credentials = new Credentials(db.database().dataSource());
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

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A SCRAM credential written as the admin API writes it: only the derived keys are stored. */
    private static Credential scramCredential(String username, String password, ScramAlgorithm algorithm,
            List<String> publish) {
        return credentials.create(new Credentials.Input(Credential.SCRAM, username, null, null, null, publish,
                List.of(), ScramKeys.derive(algorithm, password.toCharArray())));
    }

    /** Runs the exchange of a CONNECT; returns the open connection (CONNACK 0x00 read and checked). */
    private static RawMqtt connected(ScramClient client, String clientId) throws Exception {
        RawMqtt raw = RawMqtt.connect(broker.mqttPort());
        raw.send(client.connect(clientId));
        ScramClient.Auth serverFirst = ScramClient.readAuth(raw);
        assertEquals(0x18, serverFirst.reason(), "AUTH 0x18 Continue authentication");
        assertEquals(client.method(), serverFirst.method());
        raw.send(ScramClient.auth(0x18, client.method(), client.clientFinal(serverFirst.data())));
        RawMqtt.ConnAck connack = RawMqtt.parseConnAckV5(raw.readType(2));
        assertEquals(0x00, connack.reasonCode());
        assertEquals(client.method(), connack.properties().get(0x15), "CONNACK names the Authentication Method");
        byte[] serverFinal = (byte[]) connack.properties().get(0x16);
        assertNotNull(serverFinal, "CONNACK carries server-final-message");
        assertTrue(client.serverVerified(serverFinal), "the broker proved it holds the keys of this password");
        return raw;
    }

    /** The reason code of the packet ending an exchange that fails: CONNACK before any AUTH or after one. */
    private static int refusal(RawMqtt raw) throws IOException {
        byte[] packet = raw.read();
        assertNotNull(packet, "an answer before the connection closes");
        assertEquals(0x20, packet[0] & 0xF0, "CONNACK");
        return packet[3] & 0xFF;
    }

    @ParameterizedTest
    @ValueSource(strings = {"SHA-256", "SHA-512"})
    @DisplayName("[MQTT-4.12] SCRAM exchange: AUTH 0x18 server-first, AUTH 0x18 client-final, CONNACK 0x00 with server-final; the credential's rules apply")
    void exchangeSucceeds(String hash) throws Exception {
        String user = unique("scram");
        scramCredential(user, "pencil", ScramAlgorithm.ofApiName(hash), List.of("up/${username}"));
        try (RawMqtt raw = connected(new ScramClient(hash, user, "pencil"), unique("c"))) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(raw, 1, "up/" + user, "ok"));
            assertEquals(0x87, SecurityFixture.publishQos1V5(raw, 2, "up/someone-else", "no"));
        }
    }

    @Test
    @DisplayName("A wrong password is refused with CONNACK 0x86 after the exchange, and listed as a refused connection")
    void wrongPassword() throws Exception {
        String user = unique("scram");
        String clientId = unique("c");
        scramCredential(user, "right", ScramAlgorithm.SHA_256, List.of());
        ScramClient client = new ScramClient("SHA-256", user, "wrong");
        try (RawMqtt raw = RawMqtt.connect(broker.mqttPort())) {
            raw.send(client.connect(clientId));
            ScramClient.Auth serverFirst = ScramClient.readAuth(raw);
            raw.send(ScramClient.auth(0x18, client.method(), client.clientFinal(serverFirst.data())));
            assertEquals(0x86, refusal(raw));
            assertTrue(raw.closedByBroker());
        }
        RefusedConnections refused = new RefusedConnections(db.database().dataSource());
        Await.until(Duration.ofSeconds(10), "the refusal is logged", () -> refused.list(
                new RefusedConnections.Filter(clientId, null, null, null), 0, 10).items().stream()
                .anyMatch(r -> RefusedConnection.BAD_CREDENTIALS.equals(r.reason()) && user.equals(r.username())));
    }

    @Test
    @DisplayName("An unknown user gets a server-first like any other and CONNACK 0x86; so does a credential of the other algorithm")
    void unknownUser() throws Exception {
        for (ScramClient client : List.of(new ScramClient("SHA-256", unique("ghost"), "pw"),
                new ScramClient("SHA-256", otherAlgorithmUser(), "pw"))) {
            try (RawMqtt raw = RawMqtt.connect(broker.mqttPort())) {
                raw.send(client.connect(unique("c")));
                ScramClient.Auth serverFirst = ScramClient.readAuth(raw);
                assertEquals(0x18, serverFirst.reason());
                assertTrue(new String(serverFirst.data(), StandardCharsets.UTF_8).contains(",i=4096"));
                raw.send(ScramClient.auth(0x18, client.method(), client.clientFinal(serverFirst.data())));
                assertEquals(0x86, refusal(raw));
            }
        }
    }

    private static String otherAlgorithmUser() {
        String user = unique("sha512");
        scramCredential(user, "pw", ScramAlgorithm.SHA_512, List.of());
        return user;
    }

    @Test
    @DisplayName("[MQTT-4.12.0-1] An Authentication Method the node does not offer is refused with CONNACK 0x8C")
    void unsupportedMethod() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(broker.mqttPort())) {
            raw.send(ScramClient.connect(unique("c"), "SCRAM-SHA-1", "n,,n=u,r=abc".getBytes(StandardCharsets.UTF_8)));
            assertEquals(0x8C, refusal(raw));
            assertTrue(raw.closedByBroker());
        }
    }

    @Test
    @DisplayName("A malformed client-first is refused with 0x86; a packet other than AUTH during the exchange with 0x82")
    void brokenExchanges() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(broker.mqttPort())) {
            raw.send(ScramClient.connect(unique("c"), "SCRAM-SHA-256", "nonsense".getBytes(StandardCharsets.UTF_8)));
            assertEquals(0x86, refusal(raw));
        }
        String user = unique("scram");
        scramCredential(user, "pw", ScramAlgorithm.SHA_256, List.of());
        ScramClient client = new ScramClient("SHA-256", user, "pw");
        try (RawMqtt raw = RawMqtt.connect(broker.mqttPort())) {
            raw.send(client.connect(unique("c")));
            assertEquals(0x18, ScramClient.readAuth(raw).reason());
            raw.send(RawMqtt.packet(0xC0, new byte[0])); // PINGREQ instead of AUTH
            assertEquals(0x82, refusal(raw));
            assertTrue(raw.closedByBroker());
        }
    }

    @Test
    @DisplayName("[MQTT-4.12.1] Re-authentication: AUTH 0x19 runs the exchange again on the open connection, ending in AUTH 0x00 with server-final")
    void reauthenticationSucceeds() throws Exception {
        String user = unique("scram");
        scramCredential(user, "pw", ScramAlgorithm.SHA_512, List.of("up/#"));
        try (RawMqtt raw = connected(new ScramClient("SHA-512", user, "pw"), unique("c"))) {
            ScramClient again = new ScramClient("SHA-512", user, "pw");
            raw.send(ScramClient.auth(0x19, again.method(), again.clientFirst()));
            ScramClient.Auth serverFirst = ScramClient.readAuth(raw);
            assertEquals(0x18, serverFirst.reason());
            raw.send(ScramClient.auth(0x18, again.method(), again.clientFinal(serverFirst.data())));
            ScramClient.Auth success = ScramClient.readAuth(raw);
            assertEquals(0x00, success.reason());
            assertEquals(again.method(), success.method());
            assertTrue(again.serverVerified(success.data()));
            assertEquals(0x00, SecurityFixture.publishQos1V5(raw, 1, "up/still", "connected"));
        }
    }

    @Test
    @DisplayName("[MQTT-4.12.1] A failed re-authentication ends the connection with DISCONNECT 0x87")
    void reauthenticationFails() throws Exception {
        String user = unique("scram");
        scramCredential(user, "pw", ScramAlgorithm.SHA_256, List.of());
        try (RawMqtt raw = connected(new ScramClient("SHA-256", user, "pw"), unique("c"))) {
            ScramClient wrong = new ScramClient("SHA-256", user, "not-the-password");
            raw.send(ScramClient.auth(0x19, wrong.method(), wrong.clientFirst()));
            ScramClient.Auth serverFirst = ScramClient.readAuth(raw);
            raw.send(ScramClient.auth(0x18, wrong.method(), wrong.clientFinal(serverFirst.data())));
            byte[] disconnect = raw.readType(14);
            assertEquals(0x87, disconnect[2] & 0xFF, "DISCONNECT 0x87 Not authorized");
            assertTrue(raw.closedByBroker());
        }
    }

    @Test
    @DisplayName("[MQTT-4.12.1] Re-authentication with another method than the CONNECT's is a protocol error (DISCONNECT 0x82); so is AUTH after a CONNECT without method")
    void reauthenticationWithAnotherMethod() throws Exception {
        String user = unique("scram");
        scramCredential(user, "pw", ScramAlgorithm.SHA_256, List.of());
        try (RawMqtt raw = connected(new ScramClient("SHA-256", user, "pw"), unique("c"))) {
            ScramClient other = new ScramClient("SHA-512", user, "pw");
            raw.send(ScramClient.auth(0x19, other.method(), other.clientFirst()));
            assertEquals(0x82, raw.readType(14)[2] & 0xFF);
            assertTrue(raw.closedByBroker());
        }
        String basicUser = unique("basic");
        new SecurityFixture(db, broker).credential(basicUser, null, null, List.of(), List.of());
        try (var basic = SecurityFixture.connect(broker.mqttPort(), 5, unique("c"), basicUser, null).expect(0x00)) {
            ScramClient client = new ScramClient("SHA-256", user, "pw");
            basic.raw().send(ScramClient.auth(0x19, client.method(), client.clientFirst()));
            assertEquals(0x82, basic.raw().readType(14)[2] & 0xFF);
        }
    }

    @Test
    @DisplayName("A scram credential created through the admin API (password hashed on arrival, never returned) lets its client in")
    void credentialThroughTheAdminApi() throws Exception {
        String user = unique("api");
        HttpResponse<String> bad = call("POST", "/api/v1/credentials", "{\"type\":\"scram\",\"username\":\"" + user
                + "\",\"password\":\"pw\",\"algorithm\":\"SHA-1\"}");
        assertEquals(400, bad.statusCode(), bad.body());
        assertTrue(bad.body().contains("algorithm"), bad.body());
        HttpResponse<String> noPassword = call("POST", "/api/v1/credentials", "{\"type\":\"scram\",\"username\":\""
                + user + "\",\"algorithm\":\"SHA-256\"}");
        assertEquals(400, noPassword.statusCode(), noPassword.body());
        assertTrue(noPassword.body().contains("password"), noPassword.body());

        HttpResponse<String> created = call("POST", "/api/v1/credentials", "{\"type\":\"scram\",\"username\":\"" + user
                + "\",\"password\":\"s3cret-pw\",\"algorithm\":\"SHA-256\",\"publish\":[\"t/#\"],\"subscribe\":[]}");
        assertEquals(201, created.statusCode(), created.body());
        String id = JSON.readTree(created.body()).get("id").asText();
        HttpResponse<String> read = call("GET", "/api/v1/credentials/" + id, null);
        JsonNode view = JSON.readTree(read.body());
        assertEquals("scram", view.get("type").asText());
        assertEquals("SHA-256", view.get("algorithm").asText());
        assertTrue(view.get("hasPassword").asBoolean());
        assertFalse(read.body().contains("s3cret-pw") || read.body().contains("storedKey") || read.body().contains("salt"),
                read.body());
        Credential stored = credentials.get(id).orElseThrow();
        assertEquals(4096, stored.scram().iterations());
        assertArrayEquals(ScramKeys.derive(ScramAlgorithm.SHA_256, "s3cret-pw".toCharArray(), stored.scram().salt(),
                4096).storedKey(), stored.scram().storedKey(), "the stored form of the given password");

        try (RawMqtt raw = connected(new ScramClient("SHA-256", user, "s3cret-pw"), unique("c"))) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(raw, 1, "t/1", "hello"));
        }

        JsonNode request = JSON.readTree(call("GET", "/api/v1/openapi.json", null).body())
                .path("components").path("schemas").path("CredentialRequest").path("properties");
        assertTrue(request.path("type").path("enum").toString().contains("scram"), request.toString());
        assertEquals("[\"SHA-256\",\"SHA-512\"]", request.path("algorithm").path("enum").toString(), request.toString());
    }

    @Test
    @DisplayName("The HiveMQ MQTT client's enhanced authentication connects, re-authenticates and verifies the broker; a wrong password gets 0x86")
    void aClientLibrary() throws Exception {
        String user = unique("lib");
        scramCredential(user, "pw-lib", ScramAlgorithm.SHA_256, List.of("lib/#"));
        ScramMechanism mechanism = new ScramMechanism("SHA-256", user, "pw-lib");
        Mqtt5BlockingClient client = Mqtt5Client.builder().identifier(unique("lib")).serverHost("127.0.0.1")
                .serverPort(broker.mqttPort()).enhancedAuth(mechanism).buildBlocking();
        assertEquals(Mqtt5ConnAckReasonCode.SUCCESS, client.connect().getReasonCode());
        assertEquals(1, mechanism.serverVerified.get());
        client.reauth();
        Await.until(Duration.ofSeconds(10), "re-authenticated", () -> mechanism.serverVerified.get() == 2);
        client.publishWith().topic("lib/1").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
        client.disconnect();

        Mqtt5BlockingClient wrong = Mqtt5Client.builder().identifier(unique("lib")).serverHost("127.0.0.1")
                .serverPort(broker.mqttPort()).enhancedAuth(new ScramMechanism("SHA-256", user, "nope")).buildBlocking();
        Mqtt5ConnAckException refused = org.junit.jupiter.api.Assertions.assertThrows(Mqtt5ConnAckException.class,
                wrong::connect);
        assertEquals(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD, refused.getMqttMessage().getReasonCode());
    }

    private static HttpResponse<String> call(String method, String path, String body) {
        return io.fleetmq.app.support.AdminHttp.send(broker.node().httpPort(), token, method, path, body);
    }
}
