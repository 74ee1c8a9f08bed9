package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Malformed and hostile input over raw sockets: each gets the reason code the specification names,
 * or a close where it names none, and after each the node is still ready and serves other clients.
 */
class HostilePacketsTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;
    private static int probes;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** Promise 6: bad input touches only its own connection. */
    @AfterEach
    void theNodeStillServesOtherClients() throws Exception {
        assertTrue(broker.isReady(), "/health/ready");
        String topic = "healthy/" + probes++;
        Mqtt5BlockingClient sub = broker.connectedV5("healthy-sub");
        Mqtt5BlockingClient pub = broker.connectedV5("healthy-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {42}).send();
            assertArrayEquals(new byte[] {42}, Received.next(in).getPayloadAsBytes());
        }
        sub.disconnect();
        pub.disconnect();
    }

    /** Sends {@code hex} after CONNECT and expects DISCONNECT with {@code reasonCode}, then the close. */
    private static void expectDisconnect(String clientId, String hex, int reasonCode) throws Exception {
        try (RawMqtt raw = broker.rawV5(clientId)) {
            raw.sendHex(hex);
            expectDisconnect(raw, reasonCode);
        }
    }

    private static void expectDisconnect(RawMqtt raw, int reasonCode) throws Exception {
        byte[] disconnect = raw.readType(14);
        assertEquals(reasonCode, disconnect[2] & 0xFF, "DISCONNECT reason code, packet "
                + HexFormat.of().formatHex(disconnect));
        assertTrue(raw.closedByBroker(), "[MQTT-3.14.4-2] closed after DISCONNECT");
    }

    /** Sends {@code connect} as the first packet and expects CONNACK with {@code reasonCode}, then the close. */
    private static void expectConnAck(byte[] connect, int reasonCode) throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(connect);
            String connack = raw.readHex();
            assertEquals("20", connack.substring(0, 2), connack);
            assertEquals(String.format("%02x", reasonCode), connack.substring(6, 8), connack);
            assertNull(raw.read(), "[MQTT-3.2.2-7] closed after a refusing CONNACK");
        }
    }

    // ------------------------------------------------------------------ before CONNECT

    @Test
    @DisplayName("[MQTT-3.1.0-1] a PINGREQ as the first packet: closed without an answer")
    void theFirstPacketMustBeConnect() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.sendHex("c000"); // PINGREQ
            assertTrue(raw.closedByBroker(), "[MQTT-3.1.0-1]");
        }
    }

    @Test
    @DisplayName("[MQTT-3.1.0-1] a PUBLISH before CONNECT: closed without an answer, nothing published")
    void publishBeforeConnect() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("before-connect-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("early/t").send();
            try (RawMqtt raw = broker.raw()) {
                raw.send(RawMqtt.publishV5("early/t", 0, 0, new byte[] {1}));
                assertNull(raw.read(), "closed, no CONNACK");
            }
            assertTrue(Received.nothingWithin(in, 1_000), "the PUBLISH went nowhere");
        }
        sub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-3] CONNECT with the reserved flag set: CONNACK 0x81")
    void connectReservedFlag() throws Exception {
        expectConnAck(HexFormat.of().parseHex("100e00044d5154540503003c00000161"), 0x81);
    }

    @Test
    @DisplayName("[MQTT-3.1.4-1] [MQTT-1.5.4-1] a client identifier that is not UTF-8: CONNACK 0x81")
    void connectWithInvalidUtf8ClientId() throws Exception {
        expectConnAck(HexFormat.of().parseHex("100f00044d5154540502003c000002c328"), 0x81);
    }

    @Test
    @DisplayName("[MQTT-3.1.4-1] a CONNECT whose Remaining Length is shorter than its fields: CONNACK 0x81")
    void connectShorterThanItsFields() throws Exception {
        // Remaining Length 12 while the client identifier says 5 bytes and 1 follows.
        expectConnAck(HexFormat.of().parseHex("100c00044d5154540502003c000005" + "61"), 0x81);
    }

    @Test
    @DisplayName("3.1.1 [MQTT-3.1.4-1] a malformed 3.1.1 CONNECT is closed without CONNACK")
    void malformedMqtt311Connect() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.sendHex("100d00044d5154540403003c000161"); // reserved flag set
            assertNull(raw.read(), "no MQTT 5 CONNACK for a 3.1.1 client");
        }
    }

    @Test
    @DisplayName("3.2.2.2 a CONNECT larger than the maximum packet size: CONNACK 0x95 from its fixed header on")
    void oversizeConnect() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.sendHex("10 ffff7f"); // claims 2 MiB, sends none of it
            String connack = raw.readHex();
            assertEquals("95", connack.substring(6, 8), connack);
        }
    }

    // ------------------------------------------------------------------ after CONNECT

    @Test
    @DisplayName("[MQTT-3.1.0-2] a second CONNECT: DISCONNECT 0x82")
    void aSecondConnect() throws Exception {
        try (RawMqtt raw = broker.rawV5("twice")) {
            raw.send(RawMqtt.connectV5("twice"));
            expectDisconnect(raw, 0x82);
        }
    }

    @Test
    @DisplayName("[MQTT-4.13.1-1] a PUBLISH whose Remaining Length is shorter than its topic: DISCONNECT 0x81 at once")
    void publishShorterThanItsTopic() throws Exception {
        expectDisconnect("short-publish", "3003 0064 61", 0x81);
    }

    @Test
    @DisplayName("1.5.5 a Remaining Length of five bytes: DISCONNECT 0x81")
    void fiveByteRemainingLength() throws Exception {
        expectDisconnect("long-length", "30 ffffffff7f", 0x81);
    }

    @Test
    @DisplayName("[MQTT-1.5.4-1] a topic that is not UTF-8: DISCONNECT 0x81")
    void invalidUtf8Topic() throws Exception {
        expectDisconnect("bad-utf8", "3006 0002 c328 00 78", 0x81);
    }

    @Test
    @DisplayName("[MQTT-1.5.4-2] a topic containing U+0000: DISCONNECT 0x81")
    void nullCharacterInTopic() throws Exception {
        expectDisconnect("null-char", "3007 0003 610062 00 78", 0x81);
    }

    @Test
    @DisplayName("[MQTT-3.6.1-1] PUBREL with reserved fixed header bits 0000 instead of 0010: DISCONNECT 0x81")
    void aMalformedPacketAfterConnectGetsDisconnect0x81() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV5("malformed"));
            raw.read();
            raw.sendHex("6002 0001"); // PUBREL with fixed header flags 0000 instead of 0010 [MQTT-3.6.1-1]
            String disconnect = raw.readHex();
            assertEquals("e0", disconnect.substring(0, 2), disconnect);
            assertEquals("81", disconnect.substring(4, 6), disconnect);
        }
    }

    @Test
    @DisplayName("[MQTT-3.8.1-1] SUBSCRIBE with reserved fixed header bits 0000: DISCONNECT 0x81")
    void subscribeReservedFixedHeaderBits() throws Exception {
        expectDisconnect("sub-flags", "8007 0001 00 0001 61 00", 0x81);
    }

    @Test
    @DisplayName("[MQTT-3.8.3-5] reserved bits in the Subscription Options: DISCONNECT 0x81")
    void subscriptionOptionsReservedBits() throws Exception {
        expectDisconnect("sub-options", "8207 0001 00 0001 61 c0", 0x81);
    }

    @Test
    @DisplayName("[MQTT-3.3.1-4] PUBLISH with QoS 3: DISCONNECT 0x81")
    void qos3() throws Exception {
        expectDisconnect("qos3", "3607 0001 61 0001 00 78", 0x81);
    }

    @Test
    @DisplayName("[MQTT-3.3.2-2] [MQTT-4.7.0-1] a wildcard in a PUBLISH topic: DISCONNECT 0x90")
    void aWildcardInAPublishTopicIsRefusedWith0x90() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV5("wildpub"));
            raw.read();
            raw.sendHex("3005 0001 23 00 78"); // topic "#"
            String disconnect = raw.readHex();
            assertEquals("e0", disconnect.substring(0, 2), disconnect);
            assertEquals("90", disconnect.substring(4, 6), disconnect);
        }
    }

    @Test
    @DisplayName("[MQTT-3.3.2-8] Topic Alias 0: DISCONNECT 0x94")
    void topicAliasZero() throws Exception {
        expectDisconnect("alias-0", "3008 0001 61 03 230000 78", 0x94);
    }

    @Test
    @DisplayName("3.8.2.1.2 Subscription Identifier 0: DISCONNECT 0x82")
    void subscriptionIdentifierZero() throws Exception {
        expectDisconnect("subid-0", "8209 0001 02 0b00 0001 61 00", 0x82);
    }

    @Test
    @DisplayName("[MQTT-3.3.4-6] a PUBLISH from a client carrying a Subscription Identifier: DISCONNECT 0x82")
    void subscriptionIdentifierInPublish() throws Exception {
        expectDisconnect("subid-pub", "3007 0001 61 02 0b01 78", 0x82);
    }

    @Test
    @DisplayName("3.3.2.3.2 two Message Expiry Intervals in a PUBLISH: DISCONNECT 0x82")
    void duplicateMessageExpiry() throws Exception {
        expectDisconnect("dup-expiry", "300f 0001 61 0a 020000000a 020000000a 78", 0x82);
    }

    @Test
    @DisplayName("3.3.2.3.4 two Topic Aliases in a PUBLISH: DISCONNECT 0x82")
    void duplicateTopicAlias() throws Exception {
        expectDisconnect("dup-alias", "300b 0001 61 06 230001 230002 78", 0x82);
    }

    @Test
    @DisplayName("2.2.2.2 a property the packet may not carry (Session Expiry Interval in PUBLISH): DISCONNECT 0x81")
    void propertyNotAllowed() throws Exception {
        expectDisconnect("bad-prop", "300a 0001 61 05 1100000010 78", 0x81);
    }

    @Test
    @DisplayName("3.15 AUTH without enhanced authentication: DISCONNECT 0x82")
    void authPacket() throws Exception {
        expectDisconnect("auth-packet", "f000", 0x82);
    }

    @Test
    @DisplayName("2.1.2 packet type 0 is reserved: DISCONNECT 0x81")
    void reservedPacketType() throws Exception {
        expectDisconnect("type-0", "0000", 0x81);
    }

    @Test
    @DisplayName("4.13 a PUBLISH larger than the maximum packet size: DISCONNECT 0x95 from its fixed header on")
    void oversizePublish() throws Exception {
        expectDisconnect("oversize", "30 ffff7f", 0x95);
    }

    @Test
    @DisplayName("3.1.1 [MQTT-3.8.3-4]: a SUBSCRIBE requesting QoS 3 is closed without a DISCONNECT")
    void mqtt311ViolationsCloseWithoutDisconnect() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV311("hostile-311"));
            assertEquals("20020000", raw.readHex());
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.writeBytes(new byte[] {0, 1});
            RawMqtt.writeString(body, "a");
            body.write(3);
            raw.send(RawMqtt.packet(0x82, body.toByteArray()));
            assertNull(raw.read(), "3.1.1 has no DISCONNECT from the server");
        }
    }

    @Test
    @DisplayName("3.1.1 [MQTT-3.1.2-22] CONNECT with a password and no user name is closed without CONNACK")
    void mqtt311PasswordWithoutUserName() throws Exception {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        RawMqtt.writeString(body, "MQTT");
        body.write(4);
        body.write(0x42); // password flag, clean session; user name flag clear
        body.writeBytes(new byte[] {0, 60});
        RawMqtt.writeString(body, "pw-only");
        RawMqtt.writeString(body, "secret"); // the password
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.packet(0x10, body.toByteArray()));
            assertNull(raw.read(), "[MQTT-3.1.2-22] closed, no CONNACK");
        }
    }

    @Test
    @DisplayName("3.1.1 [MQTT-4.7.1-1] [MQTT-4.7.1-2] [MQTT-4.8.0-1] SUBSCRIBE to a/#/b, a/b+ or a# closes the connection")
    void mqtt311InvalidTopicFiltersClose() throws Exception {
        for (String filter : new String[] {"a/#/b", "a/b+", "a#"}) {
            try (RawMqtt raw = broker.raw()) {
                raw.send(RawMqtt.connectV311("bad-filter-311"));
                assertEquals("20020000", raw.readHex());
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                body.writeBytes(new byte[] {0, 1});
                RawMqtt.writeString(body, "ok/+");
                body.write(1);
                RawMqtt.writeString(body, filter);
                body.write(1);
                raw.send(RawMqtt.packet(0x82, body.toByteArray()));
                assertNull(raw.read(), filter + ": closed without SUBACK");
            }
        }
    }

    @Test
    @DisplayName("[MQTT-4.7.1-1] MQTT 5: SUBSCRIBE to a# gets SUBACK 0x8F and the connection stays open")
    void mqtt5InvalidTopicFilterGets0x8F() throws Exception {
        try (RawMqtt raw = broker.rawV5("bad-filter-5")) {
            raw.send(RawMqtt.subscribeV5(7, "a#", 1));
            byte[] suback = raw.readType(9);
            assertEquals(0x8F, suback[suback.length - 1] & 0xFF, HexFormat.of().formatHex(suback));
            raw.sendHex("c000");
            assertEquals("d000", raw.readHex(), "still connected");
        }
    }
}
