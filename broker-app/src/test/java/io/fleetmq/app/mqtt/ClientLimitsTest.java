package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Limits of what one client may take through its connection, each with its answer and its count
 * in {@code fleetmq_limit_exceeded_total}. A node with small limits so they are reached at once;
 * mqtt.max-keep-alive keeps its shipped default.
 */
class ClientLimitsTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of(
                "MQTT_MAX_CLIENT_ID_LENGTH", "16",
                "MQTT_MAX_TOPIC_LENGTH", "32",
                "MQTT_MAX_TOPIC_LEVELS", "4",
                "MQTT_MAX_USER_PROPERTIES", "2",
                "MQTT_MAX_USER_PROPERTY_BYTES", "64",
                "MQTT_PACKET_TIMEOUT", "2s",
                "MQTT_MAX_PARTIAL_PACKET_BYTES", "1024",
                "MQTT_MAX_WRITE_BUFFER", "1024",
                "MQTT_MAX_PUBLISH_RATE", "20"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static void expectDisconnect(RawMqtt raw, int reasonCode) throws IOException {
        byte[] disconnect = raw.readType(14);
        assertEquals(reasonCode, disconnect[2] & 0xFF, "DISCONNECT " + HexFormat.of().formatHex(disconnect));
        assertTrue(raw.closedByBroker(), "closed after DISCONNECT");
    }

    private static void expectCounted(String limit, double atLeast) {
        Await.until(Duration.ofSeconds(10), limit + " counted in /metrics",
                () -> broker.limitExceeded(limit) >= atLeast);
    }

    /** A user property as hex: identifier 0x26, name, value. */
    private static String userProperty(String name, String value) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(0x26);
        RawMqtt.writeString(b, name);
        RawMqtt.writeString(b, value);
        return HexFormat.of().formatHex(b.toByteArray());
    }

    @Test
    @DisplayName("mqtt.max-keep-alive has a finite default: keep alive 0 gets Server Keep Alive 1200")
    void keepAliveIsBoundedByDefault() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 0, "forever", "00"));
            RawMqtt.ConnAck ack = RawMqtt.parseConnAckV5(raw.readType(2));
            assertEquals(0, ack.reasonCode());
            assertEquals(1200L, ack.properties().get(0x13), "[MQTT-3.2.2-21] Server Keep Alive");
        }
    }

    @Test
    @DisplayName("a client identifier longer than mqtt.max-client-id-length: CONNACK 0x85, 3.1.1 return code 2")
    void clientIdentifierLength() throws Exception {
        double before = broker.limitExceeded("client_id_length");
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV5("x".repeat(17)));
            String connack = raw.readHex();
            assertEquals("85", connack.substring(6, 8), connack);
            assertNull(raw.read());
        }
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV311("y".repeat(17)));
            assertEquals("20020002", raw.readHex());
        }
        broker.rawV5("z".repeat(16)).close(); // at the limit is accepted
        expectCounted("client_id_length", before + 2);
    }

    @Test
    @DisplayName("a topic beyond mqtt.max-topic-length or mqtt.max-topic-levels: DISCONNECT 0x90 (a filter 0x8F, 3.1.1 closed)")
    void topicLengthAndLevels() throws Exception {
        double length = broker.limitExceeded("topic_length");
        double levels = broker.limitExceeded("topic_levels");
        try (RawMqtt raw = broker.rawV5("long-topic")) {
            raw.send(RawMqtt.publishV5("t".repeat(33), 0, 0, new byte[] {1}));
            expectDisconnect(raw, 0x90);
        }
        try (RawMqtt raw = broker.rawV5("deep-topic")) {
            raw.send(RawMqtt.publishV5("a/b/c/d/e", 0, 0, new byte[] {1}));
            expectDisconnect(raw, 0x90);
        }
        try (RawMqtt raw = broker.rawV5("deep-filter")) {
            raw.send(RawMqtt.subscribeV5(1, "a/b/c/d/#", 0));
            expectDisconnect(raw, 0x8F);
        }
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV311("long-topic-311"));
            assertEquals("20020000", raw.readHex());
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            RawMqtt.writeString(body, "t".repeat(33));
            body.write(1);
            raw.send(RawMqtt.packet(0x30, body.toByteArray()));
            assertNull(raw.read(), "3.1.1: closed");
        }
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connectV5WithWill("long-will", 60, "", "", "w".repeat(33), new byte[] {1}));
            String connack = raw.readHex();
            assertEquals("90", connack.substring(6, 8), connack);
        }
        try (RawMqtt raw = broker.rawV5("fits")) {
            raw.send(RawMqtt.publishV5("a/b/c/" + "d".repeat(26), 1, 1, new byte[] {1}));
            assertEquals(4, raw.readType(4)[0] >> 4, "32 bytes in 4 levels are accepted");
        }
        expectCounted("topic_length", length + 3);
        expectCounted("topic_levels", levels + 2);
    }

    @Test
    @DisplayName("user properties beyond mqtt.max-user-properties or mqtt.max-user-property-bytes: DISCONNECT 0x97, CONNACK 0x97")
    void userProperties() throws Exception {
        double count = broker.limitExceeded("user_properties");
        double bytes = broker.limitExceeded("user_property_bytes");
        try (RawMqtt raw = broker.rawV5("many-props")) {
            raw.send(RawMqtt.publishV5("props/t", 0, 0,
                    userProperty("a", "1") + userProperty("b", "2") + userProperty("c", "3"), new byte[] {1}));
            expectDisconnect(raw, 0x97);
        }
        try (RawMqtt raw = broker.rawV5("big-props")) {
            raw.send(RawMqtt.publishV5("props/t", 0, 0, userProperty("a", "v".repeat(64)), new byte[] {1}));
            expectDisconnect(raw, 0x97);
        }
        try (RawMqtt raw = broker.raw()) {
            byte[] props = HexFormat.of().parseHex(userProperty("a", "1") + userProperty("b", "2") + userProperty("c", "3"));
            ByteArrayOutputStream p = new ByteArrayOutputStream();
            RawMqtt.writeVariableByteInteger(p, props.length);
            p.writeBytes(props);
            raw.send(RawMqtt.connect(5, "props-connect", HexFormat.of().formatHex(p.toByteArray())));
            String connack = raw.readHex();
            assertEquals("97", connack.substring(6, 8), connack);
        }
        try (RawMqtt raw = broker.rawV5("two-props")) {
            raw.send(RawMqtt.publishV5("props/t", 1, 1, userProperty("a", "1") + userProperty("b", "2"), new byte[] {1}));
            assertEquals(4, raw.readType(4)[0] >> 4, "two user properties are accepted");
        }
        expectCounted("user_properties", count + 2);
        expectCounted("user_property_bytes", bytes + 1);
    }

    @Test
    @DisplayName("a packet not finished within mqtt.packet-timeout: DISCONNECT 0x8D; before CONNECT closed without an answer")
    void unfinishedPacketTimesOut() throws Exception {
        double before = broker.limitExceeded("packet_timeout");
        try (RawMqtt raw = broker.rawV5("slow-packet")) {
            raw.sendHex("30 0a 0003 61"); // a PUBLISH of 10 bytes, 3 of them sent
            expectDisconnect(raw, 0x8D);
        }
        try (RawMqtt raw = broker.raw()) {
            raw.sendHex("10 20 0004 4d"); // the start of a CONNECT, then nothing
            assertNull(raw.read(), "closed without CONNACK");
        }
        expectCounted("packet_timeout", before + 2);
    }

    @Test
    @DisplayName("unfinished packets hold only the bytes that arrived, bounded per node by mqtt.max-partial-packet-bytes: DISCONNECT 0x97")
    void partialPacketBytesAreBoundedPerNode() throws Exception {
        double before = broker.limitExceeded("partial_packet_bytes");
        try (RawMqtt announcer = broker.rawV5("announcer"); RawMqtt other = broker.rawV5("other-partial")) {
            // Announces 1,000,000 bytes and sends 100: it holds 100 bytes of the node's 1024, not its announced size.
            announcer.send(concat(HexFormat.of().parseHex("30c0843d"), new byte[100]));
            byte[] publish = RawMqtt.publishV5("partial/t", 1, 1, new byte[800]);
            other.send(Arrays.copyOf(publish, 400));
            assertTrue(other.readWithin(200) == RawMqtt.NOTHING, "half a packet: no answer yet");
            other.send(Arrays.copyOfRange(publish, 400, publish.length));
            assertEquals(4, other.readType(4)[0] >> 4, "PUBACK: room was left for it");
        }
        try (RawMqtt raw = broker.rawV5("hoarder")) {
            raw.send(concat(HexFormat.of().parseHex("30b817"), new byte[1100])); // 3000 announced, 1100 sent
            expectDisconnect(raw, 0x97);
        }
        expectCounted("partial_packet_bytes", before + 1);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    @DisplayName("a client sending PINGREQ without reading: reading from it stops once its write buffer is full (write_buffer)")
    void aClientThatDoesNotReadIsNotReadFrom() throws Exception {
        double before = broker.limitExceeded("write_buffer");
        try (RawMqtt raw = RawMqtt.connectWithReceiveBuffer(broker.mqttPort(), 4096)) {
            raw.send(RawMqtt.connectV5("ping-flood"));
            raw.readType(2);
            byte[] pings = new byte[64 * 1024];
            for (int i = 0; i < pings.length; i += 2) {
                pings[i] = (byte) 0xC0;
            }
            AtomicBoolean stop = new AtomicBoolean();
            Thread writer = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        raw.send(pings);
                    }
                } catch (IOException e) {
                    // closed at the end of the test
                }
            }, "ping-flood");
            writer.setDaemon(true);
            writer.start();
            try {
                Await.until(Duration.ofSeconds(60), "the broker to stop reading from the client",
                        () -> broker.limitExceeded("write_buffer") > before);
                assertTrue(broker.isReady(), "the node is still ready");
            } finally {
                stop.set(true);
            }
        }
        String topic = "after-flood";
        try (RawMqtt raw = broker.rawV5("after-flood")) {
            raw.send(RawMqtt.publishV5(topic, 1, 1, "ok".getBytes(StandardCharsets.UTF_8)));
            assertEquals(4, raw.readType(4)[0] >> 4, "others are served");
        }
    }

    @Test
    @DisplayName("mqtt.max-publish-rate: a burst beyond the rate is read more slowly, not refused: all of it arrives, in order")
    void aPublisherBeyondItsRateIsSlowedDownNotRefused() throws Exception {
        double before = broker.limitExceeded("publish_rate");
        com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient sub = broker.connectedV5("rate-sub");
        try (com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient.Mqtt5Publishes in =
                     sub.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL);
             RawMqtt pub = broker.rawV5("rate-pub")) {
            sub.subscribeWith().topicFilter("rate/t").qos(com.hivemq.client.mqtt.datatypes.MqttQos.AT_LEAST_ONCE).send();
            ByteArrayOutputStream burst = new ByteArrayOutputStream();
            for (int i = 1; i <= 60; i++) { // three seconds' worth of a 20/s rate, in one write
                burst.writeBytes(RawMqtt.publishV5("rate/t", 1, i, Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
            }
            pub.send(burst.toByteArray());
            for (int i = 1; i <= 60; i++) {
                assertEquals(4, (pub.readType(4)[0] & 0xF0) >> 4, "PUBACK " + i);
            }
            for (int i = 1; i <= 60; i++) {
                assertEquals(Integer.toString(i), new String(io.fleetmq.app.support.Received.next(in).getPayloadAsBytes(),
                        StandardCharsets.UTF_8), "message " + i + ", in order");
            }
        }
        sub.disconnect();
        expectCounted("publish_rate", before + 1);
    }
}
