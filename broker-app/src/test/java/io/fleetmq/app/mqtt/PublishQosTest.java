package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PayloadFormatIndicator;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** QoS 0, 1 and 2 in both directions: acknowledgements, packet identifiers, DUP on redelivery. */
class PublishQosTest {

    private static final String SESSION_EXPIRY_300 = "05 110000012c";

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

    @Test
    @DisplayName("[MQTT-3.3.2-4] [MQTT-3.3.2-15] [MQTT-3.3.2-16] [MQTT-3.3.2-18] [MQTT-3.3.2-20] every QoS reaches the subscriber with all properties")
    void publishAtEveryQosReachesTheSubscriberWithAllProperties() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("props-sub");
        Mqtt5BlockingClient pub = broker.connectedV5("props-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("props/#").qos(MqttQos.EXACTLY_ONCE).send();
            for (MqttQos qos : MqttQos.values()) {
                Mqtt5PublishResult result = pub.publishWith().topic("props/" + qos.getCode()).qos(qos)
                        .payload(("q" + qos.getCode()).getBytes(StandardCharsets.UTF_8))
                        .contentType("text/plain")
                        .responseTopic("replies/1")
                        .correlationData("corr".getBytes(StandardCharsets.UTF_8))
                        .payloadFormatIndicator(Mqtt5PayloadFormatIndicator.UTF_8)
                        .messageExpiryInterval(3600)
                        .userProperties().add("b", "2").add("a", "1").add("b", "3").applyUserProperties()
                        .send();
                assertFalse(result.getError().isPresent(), "acknowledged");
                Mqtt5Publish m = Received.next(publishes);
                assertEquals("props/" + qos.getCode(), m.getTopic().toString());
                assertEquals(qos, m.getQos());
                assertEquals("q" + qos.getCode(), new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8));
                assertEquals("text/plain", m.getContentType().orElseThrow().toString());
                assertEquals("replies/1", m.getResponseTopic().orElseThrow().toString());
                assertEquals(ByteBuffer.wrap("corr".getBytes(StandardCharsets.UTF_8)), m.getCorrelationData().orElseThrow());
                assertEquals(Mqtt5PayloadFormatIndicator.UTF_8, m.getPayloadFormatIndicator().orElseThrow());
                long expiry = m.getMessageExpiryInterval().orElseThrow();
                assertTrue(expiry <= 3600 && expiry > 3000, "expiry counted down, not reset: " + expiry);
                // [MQTT-3.3.2-18] user properties in the order they were sent, duplicates kept.
                assertEquals(List.of("b=2", "a=1", "b=3"), m.getUserProperties().asList().stream()
                        .map(u -> u.getName() + "=" + u.getValue()).toList());
                assertFalse(m.isRetain());
            }
        }
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.4-1] [MQTT-2.2.1-5] inbound QoS 1: PUBACK with the PUBLISH's packet identifier")
    void inboundQos1IsAcknowledgedWithPubAck() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("in-q1-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL);
             RawMqtt raw = broker.rawV5("in-q1")) {
            sub.subscribeWith().topicFilter("in/q1").qos(MqttQos.AT_LEAST_ONCE).send();
            raw.send(RawMqtt.publishV5("in/q1", 1, 0x1234, new byte[] {1}));
            byte[] puback = raw.readType(4);
            assertEquals(0x12, puback[2] & 0xFF);
            assertEquals(0x34, puback[3] & 0xFF);
            assertTrue(puback.length == 4 || puback[4] == 0, "success");
            assertArrayEquals(new byte[] {1}, Received.next(publishes).getPayloadAsBytes());
        }
        sub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-4.3.3-10] [MQTT-4.3.3-11] inbound QoS 2: PUBREC, a resent PUBLISH is acknowledged again but delivered once, PUBREL gets PUBCOMP")
    void inboundQos2IsDeliveredExactlyOnce() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("in-q2-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL);
             RawMqtt raw = broker.rawV5("in-q2")) {
            sub.subscribeWith().topicFilter("in/q2").qos(MqttQos.EXACTLY_ONCE).send();
            byte[] publish = RawMqtt.publishV5("in/q2", 2, 9, new byte[] {2});
            raw.send(publish);
            byte[] pubrec = raw.readType(5);
            assertEquals(9, pubrec[3]);
            publish[0] |= 0x08; // DUP: the same message again, before PUBREL
            raw.send(publish);
            assertEquals(9, raw.readType(5)[3], "PUBREC again for the resend");
            raw.send(RawMqtt.ack(0x62, 9));
            byte[] pubcomp = raw.readType(7);
            assertEquals(9, pubcomp[3]);
            assertArrayEquals(new byte[] {2}, Received.next(publishes).getPayloadAsBytes());
            assertTrue(Received.nothingWithin(publishes, 1_000), "delivered once");
        }
        sub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-4.3.1-1] [MQTT-3.3.1-2] outbound QoS 0: no packet identifier, DUP 0")
    void outboundQos0() throws Exception {
        try (RawMqtt raw = broker.rawV5("out-q0")) {
            raw.send(RawMqtt.subscribeV5(1, "out/q0", 0));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("out-q0-pub");
            pub.publishWith().topic("out/q0").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {3}).send();
            RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
            assertEquals(0, p.qos(), "[MQTT-3.8.4-8] the granted QoS");
            assertFalse(p.dup());
            assertArrayEquals(new byte[] {3}, p.payload(), "no packet identifier before the payload");
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("[MQTT-2.2.1-4] [MQTT-4.3.2-2] outbound QoS 1: non-zero packet identifiers, distinct while unacknowledged, DUP 0")
    void outboundQos1PacketIdentifiers() throws Exception {
        try (RawMqtt raw = broker.rawV5("out-q1")) {
            raw.send(RawMqtt.subscribeV5(1, "out/q1", 1));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("out-q1-pub");
            for (int i = 0; i < 3; i++) {
                pub.publishWith().topic("out/q1").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
            Set<Integer> ids = new HashSet<>();
            for (int i = 0; i < 3; i++) {
                RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
                assertEquals(1, p.qos());
                assertFalse(p.dup(), "[MQTT-3.3.1-1] a first delivery has DUP 0");
                assertNotEquals(0, p.packetId());
                assertTrue(ids.add(p.packetId()), "unused identifier " + p.packetId());
            }
            for (int id : ids) {
                raw.send(RawMqtt.ack(0x40, id));
            }
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("4.3.3 [MQTT-2.2.1-5] outbound QoS 2: PUBLISH, PUBREC from the client, PUBREL with the same identifier, PUBCOMP")
    void outboundQos2Flow() throws Exception {
        try (RawMqtt raw = broker.rawV5("out-q2")) {
            raw.send(RawMqtt.subscribeV5(1, "out/q2", 2));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("out-q2-pub");
            pub.publishWith().topic("out/q2").qos(MqttQos.EXACTLY_ONCE).payload(new byte[] {4}).send();
            RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
            assertEquals(2, p.qos());
            raw.send(RawMqtt.ack(0x50, p.packetId()));
            byte[] pubrel = raw.readType(6);
            assertEquals(0x62, pubrel[0] & 0xFF, "[MQTT-3.6.1-1] PUBREL flags 0010");
            assertEquals(p.packetId(), (pubrel[2] & 0xFF) << 8 | pubrel[3] & 0xFF);
            raw.send(RawMqtt.packet(0x70, new byte[] {(byte) (p.packetId() >> 8), (byte) p.packetId()}));
            // The flow is complete: the next message flows at once.
            pub.publishWith().topic("out/q2").qos(MqttQos.EXACTLY_ONCE).payload(new byte[] {5}).send();
            assertArrayEquals(new byte[] {5}, RawMqtt.parsePublishV5(raw.readType(3)).payload());
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("[MQTT-4.4.0-1] [MQTT-3.3.1-1] unacknowledged messages are resent with DUP and their identifiers when the session resumes")
    void unacknowledgedMessagesAreResentWithDupWhenTheSessionResumes() throws Exception {
        int firstId;
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, "resume-dup", SESSION_EXPIRY_300));
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, "resume/t", 1));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("resume-pub");
            pub.publishWith().topic("resume/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {7}).send();
            pub.disconnect();
            byte[] publish = raw.readType(3);
            assertEquals(0, publish[0] & 0x08, "first delivery without DUP");
            firstId = RawMqtt.publishPacketId(publish);
        } // gone without PUBACK
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, false, 60, "resume-dup", SESSION_EXPIRY_300));
            byte[] connack = raw.readType(2);
            assertEquals(1, connack[2] & 0x01, "session present");
            byte[] again = raw.readType(3);
            assertEquals(0x08, again[0] & 0x08, "[MQTT-4.4.0-1] resent with DUP set");
            assertEquals(firstId, RawMqtt.publishPacketId(again), "same packet identifier");
            raw.send(RawMqtt.ack(0x40, firstId));
            raw.send(RawMqtt.packet(0xE0, new byte[] {0x00, 0x05, 0x11, 0, 0, 0, 0})); // DISCONNECT, expiry 0
        }
    }

    @Test
    @DisplayName("[MQTT-4.4.0-1] a QoS 2 message the client acknowledged with PUBREC continues with PUBREL on resume")
    void aReceivedQos2ContinuesWithPubRelOnResume() throws Exception {
        int id;
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, "resume-rel", SESSION_EXPIRY_300));
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, "resume/q2", 2));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("resume-rel-pub");
            pub.publishWith().topic("resume/q2").qos(MqttQos.EXACTLY_ONCE).payload(new byte[] {8}).send();
            pub.disconnect();
            id = RawMqtt.parsePublishV5(raw.readType(3)).packetId();
            raw.send(RawMqtt.ack(0x50, id));
            raw.readType(6);
        } // gone without PUBCOMP
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, false, 60, "resume-rel", SESSION_EXPIRY_300));
            assertEquals(1, raw.readType(2)[2] & 0x01, "session present");
            byte[] next = raw.read();
            assertEquals(0x62, next[0] & 0xFF, "PUBREL, not the PUBLISH again");
            assertEquals(id, (next[2] & 0xFF) << 8 | next[3] & 0xFF);
            raw.send(RawMqtt.packet(0x70, new byte[] {(byte) (id >> 8), (byte) id}));
            raw.send(RawMqtt.packet(0xE0, new byte[] {0x00, 0x05, 0x11, 0, 0, 0, 0}));
        }
    }
}
