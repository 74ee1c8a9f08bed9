package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckRestrictions;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CONNECT and CONNACK: what the node advertises, assigned client identifiers, Server Keep Alive,
 * Response Information, take-over, and the refusals of a CONNECT. A node whose keep alive and
 * session expiry are bounded, so both show up in CONNACK.
 */
class ConnectTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("MQTT_MAX_KEEP_ALIVE", "30", "MQTT_MAX_SESSION_EXPIRY", "3600"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    @DisplayName("[MQTT-3.1.4-5] [MQTT-3.2.2-2] CONNACK 0x00 with the node's limits and capabilities, no session on clean start")
    void connAckCarriesTheNodesLimits() {
        Mqtt5BlockingClient c = broker.v5("limits");
        Mqtt5ConnAck ack = c.connect();
        assertFalse(ack.isSessionPresent());
        Mqtt5ConnAckRestrictions r = ack.getRestrictions();
        assertEquals(1024, r.getReceiveMaximum(), "mqtt.receive-maximum");
        assertEquals(1_048_576, r.getMaximumPacketSize(), "mqtt.max-packet-size");
        assertEquals(64, r.getTopicAliasMaximum(), "mqtt.topic-alias-maximum");
        assertEquals(MqttQos.EXACTLY_ONCE, r.getMaximumQos());
        assertTrue(r.isRetainAvailable());
        assertTrue(r.isWildcardSubscriptionAvailable());
        assertTrue(r.isSharedSubscriptionAvailable());
        assertTrue(r.areSubscriptionIdentifiersAvailable());
        c.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.1.3-6] [MQTT-3.1.3-7] [MQTT-3.2.2-16] an empty client ID gets a unique Assigned Client Identifier")
    void anEmptyClientIdGetsAnAssignedOne() {
        Mqtt5BlockingClient a = Mqtt5Client.builder().serverHost("127.0.0.1").serverPort(broker.mqttPort()).buildBlocking();
        Mqtt5BlockingClient b = Mqtt5Client.builder().serverHost("127.0.0.1").serverPort(broker.mqttPort()).buildBlocking();
        String idA = a.connect().getAssignedClientIdentifier().orElseThrow().toString();
        String idB = b.connect().getAssignedClientIdentifier().orElseThrow().toString();
        assertFalse(idA.isEmpty());
        assertNotEquals(idA, idB, "not used by any other session");
        a.disconnect();
        b.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.2.2-21] a keep alive above mqtt.max-keep-alive, or 0, is lowered and returned as Server Keep Alive; [MQTT-3.2.2-22] none otherwise")
    void serverKeepAlive() {
        Mqtt5BlockingClient c = broker.v5("keepalive-long");
        assertEquals(30, c.connectWith().keepAlive(60).send().getServerKeepAlive().orElseThrow());
        c.disconnect();
        assertEquals(30, c.connectWith().noKeepAlive().send().getServerKeepAlive().orElseThrow(), "0 would mean none");
        c.disconnect();
        assertTrue(c.connectWith().keepAlive(10).send().getServerKeepAlive().isEmpty(), "10 s is within the bound");
        c.disconnect();
    }

    @Test
    @DisplayName("3.2.2.3.2 a Session Expiry Interval above mqtt.max-session-expiry is lowered and returned in CONNACK")
    void sessionExpiryIsBounded() {
        Mqtt5BlockingClient c = broker.v5("expiry-bounded");
        assertEquals(3600, c.connectWith().sessionExpiryInterval(100_000).send().getSessionExpiryInterval().orElseThrow());
        c.disconnectWith().sessionExpiryInterval(0).send();
        assertTrue(c.connectWith().sessionExpiryInterval(60).send().getSessionExpiryInterval().isEmpty(),
                "within the bound: the client's value stands and is not repeated");
        c.disconnectWith().sessionExpiryInterval(0).send();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-28] Response Information only when Request Response Information is 1")
    void responseInformationOnlyWhenRequested() {
        Mqtt5BlockingClient c = broker.v5("requester");
        Mqtt5ConnAck asked = c.connectWith().restrictions().requestResponseInformation(true).applyRestrictions().send();
        assertEquals("response/requester", asked.getResponseInformation().orElseThrow().toString());
        c.disconnect();
        Mqtt5ConnAck notAsked = c.connectWith().restrictions().requestResponseInformation(false).applyRestrictions().send();
        assertTrue(notAsked.getResponseInformation().isEmpty(), "a value of 0: no Response Information");
        c.disconnect();
        assertTrue(c.connect().getResponseInformation().isEmpty(), "absent means 0");
        c.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.1.4-3] a second connection with the same client ID takes over; the first gets DISCONNECT 0x8E")
    void aSecondConnectionWithTheSameClientIdTakesOverWith0x8E() throws Exception {
        CompletableFuture<Throwable> firstDropped = new CompletableFuture<>();
        Mqtt5BlockingClient first = Mqtt5Client.builder().identifier("twin").serverHost("127.0.0.1")
                .serverPort(broker.mqttPort())
                .addDisconnectedListener(ctx -> firstDropped.complete(ctx.getCause()))
                .buildBlocking();
        first.connect();
        Mqtt5BlockingClient second = broker.v5("twin");
        second.connect();
        Throwable cause = firstDropped.get(20, TimeUnit.SECONDS);
        assertTrue(cause instanceof Mqtt5DisconnectException, String.valueOf(cause));
        assertEquals(Mqtt5DisconnectReasonCode.SESSION_TAKEN_OVER,
                ((Mqtt5DisconnectException) cause).getMqttMessage().getReasonCode());
        second.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-2] an unsupported protocol level gets return code 1 (0x84 in 3.1.1 form), then close")
    void anUnsupportedProtocolLevelGetsReturnCode1() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(6, "lvl6", "00"));
            assertEquals("20020001", raw.readHex());
            assertNull(raw.read());
        }
    }

    @Test
    @DisplayName("[MQTT-4.12.0-1] an Authentication Method is refused with CONNACK 0x8C: enhanced authentication is not offered")
    void anAuthenticationMethodIsRefusedWith0x8C() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            // properties: authentication method (0x15) "SCRAM"
            raw.send(RawMqtt.connect(5, "auth", "08150005534352414d"));
            String connack = raw.readHex();
            assertEquals("8c", connack.substring(6, 8), connack);
            assertNull(raw.read());
        }
    }

    @Test
    @DisplayName("[MQTT-3.1.3-8] 3.1.1: an empty client ID without clean session is rejected with return code 2")
    void mqtt311EmptyClientIdWithoutCleanSessionIsRejected() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            RawMqtt.writeString(body, "MQTT");
            body.writeBytes(new byte[] {4, 0x00, 0, 60});
            RawMqtt.writeString(body, "");
            raw.send(RawMqtt.packet(0x10, body.toByteArray()));
            assertEquals("20020002", raw.readHex(), "[MQTT-3.1.3-8] identifier rejected");
        }
    }

    @Test
    @DisplayName("3.1.2.11.3 / 3.1.2.11.4 Receive Maximum or Maximum Packet Size of 0 in CONNECT: CONNACK 0x82")
    void zeroLimitsInConnectAreProtocolErrors() throws Exception {
        for (String props : new String[] {"03 210000", "05 2700000000"}) {
            try (RawMqtt raw = broker.raw()) {
                raw.send(RawMqtt.connect(5, "zero-limit", props));
                String connack = raw.readHex();
                assertEquals("82", connack.substring(6, 8), props + ": " + connack);
                assertNull(raw.read());
            }
        }
    }
}
