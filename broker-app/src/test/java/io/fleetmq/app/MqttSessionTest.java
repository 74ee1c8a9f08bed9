package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Session and flow-control behaviour: receive windows both ways, keep-alive, redelivery with DUP,
 * topic aliases towards the client, maximum packet size, shared subscriptions. A node with a
 * small receive maximum, so the limits are reached with few messages.
 */
class MqttSessionTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;
    private static int port;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("MQTT_RECEIVE_MAXIMUM", "4"));
        port = broker.mqttPort();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static Mqtt5BlockingClient publisher(String id) {
        Mqtt5BlockingClient c = Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1").serverPort(port)
                .buildBlocking();
        c.connect();
        return c;
    }

    /** Reads packets until one whose first byte's type nibble is {@code type} (SUBACK, PUBLISH...). */
    private static byte[] readType(RawMqtt raw, int type) throws Exception {
        while (true) {
            byte[] p = raw.read();
            if (p == null) {
                throw new AssertionError("connection closed while waiting for packet type " + type);
            }
            if ((p[0] & 0xF0) >> 4 == type) {
                return p;
            }
        }
    }

    @Test
    void theBrokerNeverExceedsTheClientsReceiveMaximum() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connect(5, true, 60, "window-2", "03 210002")); // Receive Maximum 2
            readType(raw, 2);
            raw.send(RawMqtt.subscribeV5(1, "window/t", 1));
            readType(raw, 9);
            Mqtt5BlockingClient pub = publisher("window-pub");
            for (int i = 0; i < 4; i++) {
                pub.publishWith().topic("window/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
            byte[] first = readType(raw, 3);
            byte[] second = readType(raw, 3);
            raw.socketTimeout(1_000);
            assertTrue(raw.nothingWithin(), "[MQTT-3.3.4-7] no third PUBLISH while two are unacknowledged");
            raw.send(RawMqtt.ack(0x40, RawMqtt.publishPacketId(first)));
            raw.socketTimeout(10_000);
            readType(raw, 3);
            raw.send(RawMqtt.ack(0x40, RawMqtt.publishPacketId(second)));
            readType(raw, 3);
            pub.disconnect();
        }
    }

    @Test
    void aClientExceedingTheBrokersReceiveMaximumIsDisconnectedWith0x93() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connectV5("flood"));
            readType(raw, 2);
            // QoS 2 slots are freed only by PUBCOMP, which needs our PUBREL: never sent here.
            for (int id = 1; id <= 5; id++) {
                raw.send(RawMqtt.publishV5("flood/t", 2, id, new byte[] {1}));
            }
            byte[] disconnect = readType(raw, 14);
            assertEquals(0x93, disconnect[2] & 0xFF, "[MQTT-3.3.4-9] Receive Maximum exceeded");
        }
    }

    @Test
    void silenceBeyondOneAndAHalfKeepAlivesEndsTheConnectionWith0x8D() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connect(5, true, 1, "sleepy", "00"));
            readType(raw, 2);
            byte[] disconnect = readType(raw, 14);
            assertEquals(0x8D, disconnect[2] & 0xFF, "[MQTT-3.1.2-22] keep alive timeout");
            assertTrue(raw.closedByBroker());
        }
    }

    @Test
    void unacknowledgedMessagesAreResentWithDupWhenTheSessionResumes() throws Exception {
        String sessionExpiry300 = "05 110000012c";
        int firstId;
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connect(5, true, 60, "resume-dup", sessionExpiry300));
            readType(raw, 2);
            raw.send(RawMqtt.subscribeV5(1, "resume/t", 1));
            readType(raw, 9);
            Mqtt5BlockingClient pub = publisher("resume-pub");
            pub.publishWith().topic("resume/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {7}).send();
            pub.disconnect();
            byte[] publish = readType(raw, 3);
            assertEquals(0, publish[0] & 0x08, "first delivery without DUP");
            firstId = RawMqtt.publishPacketId(publish);
        } // gone without PUBACK
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connect(5, false, 60, "resume-dup", sessionExpiry300));
            byte[] connack = readType(raw, 2);
            assertEquals(1, connack[2] & 0x01, "session present");
            byte[] again = readType(raw, 3);
            assertEquals(0x08, again[0] & 0x08, "[MQTT-4.4.0-1] resent with DUP set");
            assertEquals(firstId, RawMqtt.publishPacketId(again), "same packet identifier");
            raw.send(RawMqtt.ack(0x40, firstId));
            raw.send(RawMqtt.packet(0xE0, new byte[] {0x00, 0x05, 0x11, 0, 0, 0, 0})); // DISCONNECT, expiry 0
        }
    }

    @Test
    void repeatedTopicsTravelAsTopicAliasesWithinTheClientsMaximum() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connect(5, true, 60, "aliased", "03 220005")); // Topic Alias Maximum 5
            readType(raw, 2);
            raw.send(RawMqtt.subscribeV5(1, "alias/t", 0));
            readType(raw, 9);
            Mqtt5BlockingClient pub = publisher("alias-pub");
            pub.publishWith().topic("alias/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            pub.publishWith().topic("alias/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            assertEquals("alias/t", RawMqtt.publishTopic(readType(raw, 3)), "first time: topic and alias");
            assertEquals("", RawMqtt.publishTopic(readType(raw, 3)), "then the alias alone");
            pub.disconnect();
        }
    }

    @Test
    void aMessageLargerThanTheClientAcceptsIsDroppedAndCounted() throws Exception {
        try (RawMqtt raw = RawMqtt.connect(port)) {
            raw.send(RawMqtt.connect(5, true, 60, "small-client", "05 2700000040")); // Maximum Packet Size 64
            readType(raw, 2);
            raw.send(RawMqtt.subscribeV5(1, "size/t", 0));
            readType(raw, 9);
            Mqtt5BlockingClient pub = publisher("size-pub");
            pub.publishWith().topic("size/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[200]).send();
            pub.publishWith().topic("size/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {9}).send();
            byte[] delivered = readType(raw, 3);
            assertEquals(9, delivered[delivered.length - 1], "[MQTT-3.1.2-25] only the small one arrives");
            Await.until(Duration.ofSeconds(5), "the drop to be counted", () -> broker.node().metrics().scrape()
                    .contains("reason=\"packet_too_large\"} 1.0"));
            pub.disconnect();
        }
    }

    @Test
    void aSharedSubscriptionGivesEachMessageToExactlyOneMember() throws Exception {
        Mqtt5BlockingClient a = publisher("share-a");
        Mqtt5BlockingClient b = publisher("share-b");
        Set<Integer> seen = new HashSet<>();
        int total = 20;
        try (Mqtt5BlockingClient.Mqtt5Publishes inA = a.publishes(MqttGlobalPublishFilter.ALL);
             Mqtt5BlockingClient.Mqtt5Publishes inB = b.publishes(MqttGlobalPublishFilter.ALL)) {
            a.subscribeWith().topicFilter("$share/workers/jobs/#").qos(MqttQos.AT_LEAST_ONCE).send();
            b.subscribeWith().topicFilter("$share/workers/jobs/#").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5BlockingClient pub = publisher("share-pub");
            for (int i = 0; i < total; i++) {
                pub.publishWith().topic("jobs/" + i).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
            int fromA = drain(inA, seen);
            int fromB = drain(inB, seen);
            assertEquals(total, fromA + fromB, "every message delivered once");
            assertEquals(total, seen.size(), "no message twice");
            assertTrue(fromA > 0 && fromB > 0, "spread across members: " + fromA + "/" + fromB);
            pub.disconnect();
        }
        a.disconnect();
        b.disconnect();
    }

    private static int drain(Mqtt5BlockingClient.Mqtt5Publishes in, Set<Integer> seen) throws InterruptedException {
        int n = 0;
        Optional<Mqtt5Publish> m;
        while ((m = in.receive(2, TimeUnit.SECONDS)).isPresent()) {
            assertTrue(seen.add((int) m.get().getPayloadAsBytes()[0]), "duplicate " + m.get());
            n++;
        }
        return n;
    }

    @Test
    void aSessionWithExpiryZeroIsGoneAfterDisconnect() throws Exception {
        Mqtt5BlockingClient c = Mqtt5Client.builder().identifier("short-lived").serverHost("127.0.0.1")
                .serverPort(port).buildBlocking();
        c.connectWith().sessionExpiryInterval(0).send();
        c.subscribeWith().topicFilter("short/t").send();
        c.disconnect();
        Mqtt5BlockingClient again = Mqtt5Client.builder().identifier("short-lived").serverHost("127.0.0.1")
                .serverPort(port).buildBlocking();
        assertFalse(again.connectWith().cleanStart(false).send().isSessionPresent(), "[MQTT-3.1.2-23]");
        again.disconnect();
    }
}
