package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Receive Maximum and Maximum Packet Size in both directions. A node with a receive maximum of 4
 * and a maximum packet size of 4 KiB, so the limits are reached with few, small messages.
 */
class FlowControlTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("MQTT_RECEIVE_MAXIMUM", "4", "MQTT_MAX_PACKET_SIZE", "4096"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    @DisplayName("3.2.2.3.3 / 3.2.2.3.6 CONNACK carries the node's Receive Maximum and Maximum Packet Size")
    void connAckCarriesTheLimits() {
        Mqtt5BlockingClient c = broker.v5("limits");
        Mqtt5ConnAck ack = c.connect();
        assertEquals(4, ack.getRestrictions().getReceiveMaximum());
        assertEquals(4096, ack.getRestrictions().getMaximumPacketSize());
        c.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.4-9] the broker never has more unacknowledged QoS 1 messages towards a client than its Receive Maximum")
    void theBrokerNeverExceedsTheClientsReceiveMaximum() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, "window-2", "03 210002")); // Receive Maximum 2
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, "window/t", 1));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("window-pub");
            for (int i = 0; i < 4; i++) {
                pub.publishWith().topic("window/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
            byte[] first = raw.readType(3);
            byte[] second = raw.readType(3);
            raw.socketTimeout(1_000);
            assertTrue(raw.nothingWithin(), "[MQTT-3.3.4-9] no third PUBLISH while two are unacknowledged");
            raw.send(RawMqtt.ack(0x40, RawMqtt.publishPacketId(first)));
            raw.socketTimeout(10_000);
            raw.readType(3);
            raw.send(RawMqtt.ack(0x40, RawMqtt.publishPacketId(second)));
            raw.readType(3);
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("[MQTT-3.3.4-7] a client exceeding the broker's Receive Maximum is disconnected with 0x93")
    void aClientExceedingTheBrokersReceiveMaximumIsDisconnectedWith0x93() throws Exception {
        try (RawMqtt raw = broker.rawV5("flood")) {
            // QoS 2 slots are freed only by PUBCOMP, which needs our PUBREL: never sent here.
            for (int id = 1; id <= 5; id++) {
                raw.send(RawMqtt.publishV5("flood/t", 2, id, new byte[] {1}));
            }
            byte[] disconnect = raw.readType(14);
            assertEquals(0x93, disconnect[2] & 0xFF, "[MQTT-3.3.4-7] Receive Maximum exceeded");
        }
    }

    @Test
    @DisplayName("Reason codes not lost on close: a client that keeps writing still reads DISCONNECT 0x93, then the end of the stream")
    void aClientThatKeepsWritingStillReadsTheReasonCode() throws Exception {
        try (RawMqtt raw = broker.rawV5("flood-writer")) {
            for (int id = 1; id <= 4; id++) {
                raw.send(RawMqtt.publishV5("flood/w", 2, id, new byte[] {1}));
            }
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            byte[] more = RawMqtt.publishV5("flood/w", 0, 0, new byte[512]);
            Thread writer = new Thread(() -> {
                try {
                    raw.send(RawMqtt.publishV5("flood/w", 2, 5, new byte[] {1})); // the fifth: over the window
                    while (!stop.get()) {
                        raw.send(more);
                    }
                } catch (java.io.IOException e) {
                    // the broker closed at last
                }
            }, "flood-writer");
            writer.start();
            try {
                byte[] disconnect = raw.readType(14);
                assertEquals(0x93, disconnect[2] & 0xFF, "Receive Maximum exceeded");
                // The end of the stream, not a reset: the broker shut down its output and went on reading.
                assertNull(raw.read(), "then the end of the stream");
            } finally {
                stop.set(true);
                writer.join(10_000);
            }
        }
    }

    @Test
    @DisplayName("[MQTT-3.3.4-7] four unacknowledged QoS 2 messages are within the window: PUBREL frees the slots")
    void theWindowRefillsAfterPubRel() throws Exception {
        try (RawMqtt raw = broker.rawV5("window-in")) {
            for (int round = 0; round < 3; round++) {
                for (int id = 1; id <= 4; id++) {
                    raw.send(RawMqtt.publishV5("window/in", 2, id, new byte[] {(byte) id}));
                }
                // PUBRECs and the PUBCOMPs of earlier PUBRELs interleave: answer each PUBREC as it comes.
                int pubrecs = 0;
                int pubcomps = 0;
                while (pubrecs < 4 || pubcomps < 4) {
                    byte[] p = raw.read();
                    int type = (p[0] & 0xF0) >> 4;
                    int id = (p[2] & 0xFF) << 8 | p[3] & 0xFF;
                    if (type == 5) {
                        pubrecs++;
                        raw.send(RawMqtt.ack(0x62, id));
                    } else {
                        assertEquals(7, type, "PUBREC or PUBCOMP only");
                        pubcomps++;
                    }
                }
            }
        }
    }

    @Test
    @DisplayName("[MQTT-3.1.2-24] [MQTT-3.1.2-25] a message larger than the client's Maximum Packet Size is dropped and counted in /metrics")
    void aMessageLargerThanTheClientAcceptsIsDroppedAndCounted() throws Exception {
        double before = broker.dropped("packet_too_large");
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, "small-client", "05 2700000040")); // Maximum Packet Size 64
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, "size/t", 0));
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("size-pub");
            pub.publishWith().topic("size/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[200]).send();
            pub.publishWith().topic("size/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {9}).send();
            byte[] delivered = raw.readType(3);
            assertEquals(9, delivered[delivered.length - 1], "[MQTT-3.1.2-25] only the small one arrives");
            Await.until(Duration.ofSeconds(5), "the drop to be counted in /metrics",
                    () -> broker.dropped("packet_too_large") == before + 1);
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("[MQTT-3.2.2-15] 4.13 a packet larger than the broker's Maximum Packet Size: DISCONNECT 0x95")
    void aPacketLargerThanTheBrokerAcceptsGets0x95() throws Exception {
        try (RawMqtt raw = broker.rawV5("too-big")) {
            raw.send(RawMqtt.publishV5("big/t", 0, 0, new byte[5000]));
            byte[] disconnect = raw.readType(14);
            assertEquals(0x95, disconnect[2] & 0xFF);
            assertTrue(raw.closedByBroker());
        }
        try (RawMqtt ok = broker.rawV5("just-fits")) {
            ok.send(RawMqtt.publishV5("big/t", 1, 1, new byte[4000]));
            assertEquals(4, ok.readType(4)[0] >> 4, "4 KiB minus headers is accepted");
        }
    }

    @Test
    @DisplayName("3.2.2.2 a CONNECT larger than the broker's Maximum Packet Size: CONNACK 0x95")
    void anOversizeConnectGetsConnAck0x95() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, "x".repeat(5000), "00"));
            String connack = raw.readHex();
            assertEquals("95", connack.substring(6, 8), connack);
            assertTrue(raw.closedByBroker());
        }
    }
}
