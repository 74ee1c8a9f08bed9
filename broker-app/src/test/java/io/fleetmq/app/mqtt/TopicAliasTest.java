package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Topic aliases both ways: a client's aliases resolved (and refused out of range), the broker's within the client's maximum. */
class TopicAliasTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static void assertDisconnect(RawMqtt raw, int reasonCode) throws Exception {
        byte[] disconnect = raw.readType(14);
        assertEquals(reasonCode, disconnect[2] & 0xFF, "DISCONNECT reason code");
    }

    @Test
    @DisplayName("[MQTT-3.3.2-12] an alias set with a topic resolves a later PUBLISH that has only the alias")
    void inboundAliasesResolve() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("alias-in-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL);
             RawMqtt raw = broker.rawV5("alias-in")) {
            sub.subscribeWith().topicFilter("aliased/#").qos(MqttQos.AT_LEAST_ONCE).send();
            raw.send(RawMqtt.publishV5("aliased/t", 1, 1, "230001", "first".getBytes(StandardCharsets.UTF_8)));
            raw.readType(4);
            raw.send(RawMqtt.publishV5("", 1, 2, "230001", "second".getBytes(StandardCharsets.UTF_8)));
            raw.readType(4);
            // alias 1 now names a different topic
            raw.send(RawMqtt.publishV5("aliased/u", 1, 3, "230001", "third".getBytes(StandardCharsets.UTF_8)));
            raw.readType(4);
            raw.send(RawMqtt.publishV5("", 1, 4, "230001", "fourth".getBytes(StandardCharsets.UTF_8)));
            raw.readType(4);
            for (String expected : new String[] {"aliased/t first", "aliased/t second", "aliased/u third", "aliased/u fourth"}) {
                Mqtt5Publish m = Received.next(in);
                assertEquals(expected, m.getTopic() + " " + new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8));
            }
        }
        sub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.2-8] Topic Alias 0: DISCONNECT 0x94")
    void topicAliasZero() throws Exception {
        try (RawMqtt raw = broker.rawV5("alias-zero")) {
            raw.send(RawMqtt.publishV5("a", 0, 0, "230000", new byte[] {1}));
            assertDisconnect(raw, 0x94);
        }
    }

    @Test
    @DisplayName("[MQTT-3.3.2-9] a topic alias above the maximum in CONNACK: DISCONNECT 0x94")
    void aTopicAliasAboveTheMaximumIsAProtocolViolation0x94() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV5("alias"));
            raw.read(); // CONNACK
            // PUBLISH QoS 0 topic "a", properties: topic alias (0x23) = 0xFFFF
            raw.sendHex("3008 0001 61 03 23ffff 78");
            String disconnect = raw.readHex();
            assertEquals("e0", disconnect.substring(0, 2), disconnect);
            assertEquals("94", disconnect.substring(4, 6), disconnect);
        }
    }

    @Test
    @DisplayName("3.3.2.3.4 an alias never set, used without a topic: DISCONNECT 0x82")
    void anUnknownAliasIsAProtocolError() throws Exception {
        try (RawMqtt raw = broker.rawV5("alias-unknown")) {
            raw.send(RawMqtt.publishV5("", 0, 0, "230005", new byte[] {1}));
            assertDisconnect(raw, 0x82);
        }
    }

    @Test
    @DisplayName("[MQTT-3.3.2-7] aliases do not carry over to the next connection")
    void aliasesEndWithTheConnection() throws Exception {
        try (RawMqtt raw = broker.rawV5("alias-carry")) {
            raw.send(RawMqtt.publishV5("carry/t", 1, 1, "230002", new byte[] {1}));
            raw.readType(4);
        }
        try (RawMqtt raw = broker.rawV5("alias-carry")) {
            raw.send(RawMqtt.publishV5("", 0, 0, "230002", new byte[] {2}));
            assertDisconnect(raw, 0x82);
        }
    }

    @Test
    @DisplayName("[MQTT-3.1.2-26] [MQTT-3.3.2-11] repeated topics travel as aliases within the client's Topic Alias Maximum")
    void repeatedTopicsTravelAsTopicAliasesWithinTheClientsMaximum() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, "aliased", "03 220005")); // Topic Alias Maximum 5
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, "alias/t", 0));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("alias-pub");
            pub.publishWith().topic("alias/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            pub.publishWith().topic("alias/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            assertEquals("alias/t", RawMqtt.publishTopic(raw.readType(3)), "first time: topic and alias");
            assertEquals("", RawMqtt.publishTopic(raw.readType(3)), "then the alias alone");
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("[MQTT-3.1.2-26] no alias above the client's maximum: with a maximum of 1 a second topic travels in full")
    void noAliasBeyondTheClientsMaximum() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, "alias-one", "03 220001")); // Topic Alias Maximum 1
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, "one/+", 0));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("alias-one-pub");
            for (String topic : new String[] {"one/a", "one/b", "one/b", "one/a"}) {
                pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            }
            RawMqtt.Publish a = RawMqtt.parsePublishV5(raw.readType(3));
            RawMqtt.Publish b1 = RawMqtt.parsePublishV5(raw.readType(3));
            RawMqtt.Publish b2 = RawMqtt.parsePublishV5(raw.readType(3));
            RawMqtt.Publish a2 = RawMqtt.parsePublishV5(raw.readType(3));
            assertEquals(1L, a.properties().get(0x23), "one/a takes alias 1");
            assertEquals("one/b", b1.topic());
            assertFalse(b1.properties().has(0x23), "no alias 2 for a client allowing 1");
            assertEquals("one/b", b2.topic());
            assertEquals("", a2.topic(), "one/a by its alias");
            assertEquals(1L, a2.properties().get(0x23));
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("[MQTT-3.1.2-27] no aliases towards a client that sent no Topic Alias Maximum")
    void noAliasesWithoutTheClientsMaximum() throws Exception {
        try (RawMqtt raw = broker.rawV5("alias-none")) {
            raw.send(RawMqtt.subscribeV5(1, "none/t", 0));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("alias-none-pub");
            pub.publishWith().topic("none/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            pub.publishWith().topic("none/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            for (int i = 0; i < 2; i++) {
                RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
                assertEquals("none/t", p.topic());
                assertFalse(p.properties().has(0x23));
            }
            pub.disconnect();
        }
    }
}
