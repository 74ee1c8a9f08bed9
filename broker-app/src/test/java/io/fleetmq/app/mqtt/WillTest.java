package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Will messages: published when the connection ends without DISCONNECT, on DISCONNECT 0x04 and on
 * keep-alive timeout; discarded on a normal DISCONNECT; postponed by the Will Delay Interval until
 * the delay or the end of the session, and cancelled by a reconnect in time. A watcher subscribed to
 * {@code will/#} sees what is published.
 */
class WillTest {

    private static final String SESSION_EXPIRY_60 = "11 0000003c";

    @TempDir
    static Path dataDir;

    private static TestBroker broker;
    private Mqtt5BlockingClient watcher;
    private Mqtt5BlockingClient.Mqtt5Publishes wills;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @BeforeEach
    void watch() {
        watcher = broker.connectedV5("will-watcher");
        wills = watcher.publishes(MqttGlobalPublishFilter.ALL);
        watcher.subscribeWith().topicFilter("will/#").qos(MqttQos.AT_LEAST_ONCE).send();
    }

    @AfterEach
    void unwatch() {
        wills.close();
        watcher.disconnect();
    }

    private static String text(Mqtt5Publish p) {
        return new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8);
    }

    /** Connects a raw client with a will to {@code topic} and reads CONNACK 0x00. */
    private static RawMqtt connectWithWill(String clientId, int keepAlive, String connectProps, String willProps,
                                           String topic) throws Exception {
        RawMqtt raw = broker.raw();
        raw.send(RawMqtt.connectV5WithWill(clientId, keepAlive, connectProps, willProps, topic,
                clientId.getBytes(StandardCharsets.UTF_8)));
        assertEquals(0, raw.readType(2)[3], "accepted");
        return raw;
    }

    @Test
    @DisplayName("[MQTT-3.1.2-8] [MQTT-3.14.4-3] published when the connection drops, not after a normal DISCONNECT")
    void theWillIsPublishedWhenTheConnectionDropsButNotAfterANormalDisconnect() throws Exception {
        Mqtt5BlockingClient polite = broker.v5("will-polite");
        polite.connectWith().willPublish().topic("will/polite").payload("gone".getBytes()).applyWillPublish().send();
        polite.disconnect(); // normal DISCONNECT: the will is discarded [MQTT-3.1.2-10]

        connectWithWill("will-rude", 60, "", "", "will/rude").close(); // socket closed without DISCONNECT

        Mqtt5Publish will = Received.next(wills);
        assertEquals("will/rude", will.getTopic().toString());
        assertEquals("will-rude", text(will));
        assertTrue(Received.nothingWithin(wills, 1_000), "no will for the polite client");
    }

    @Test
    @DisplayName("3.14.2.1 DISCONNECT with 0x04 (Disconnect with Will Message) publishes the will")
    void disconnectWithWillMessage() throws Exception {
        Mqtt5BlockingClient c = broker.v5("will-0x04");
        c.connectWith().willPublish().topic("will/0x04").payload("asked".getBytes()).applyWillPublish().send();
        c.disconnectWith().reasonCode(Mqtt5DisconnectReasonCode.DISCONNECT_WITH_WILL_MESSAGE).send();
        Mqtt5Publish will = Received.next(wills);
        assertEquals("will/0x04", will.getTopic().toString());
        assertEquals("asked", text(will));
    }

    @Test
    @DisplayName("[MQTT-3.1.2-22] [MQTT-3.1.2-8] a keep-alive timeout publishes the will")
    void keepAliveTimeoutPublishesTheWill() throws Exception {
        try (RawMqtt raw = connectWithWill("will-sleepy", 1, "", "", "will/sleepy")) {
            byte[] disconnect = raw.readType(14);
            assertEquals(0x8D, disconnect[2] & 0xFF, "keep alive timeout");
            assertEquals("will/sleepy", Received.next(wills).getTopic().toString());
        }
    }

    @Test
    @DisplayName("3.1.3.2.2 [MQTT-3.1.2-8] the Will Delay Interval postpones the will")
    void willDelayPostponesTheWill() throws Exception {
        connectWithWill("will-delayed", 60, SESSION_EXPIRY_60, "18 00000002", "will/delayed").close();
        long closed = System.nanoTime();
        Mqtt5Publish will = Received.next(wills);
        long waitedMillis = (System.nanoTime() - closed) / 1_000_000;
        assertEquals("will/delayed", will.getTopic().toString());
        assertTrue(waitedMillis >= 1_500, "published after the 2 s delay, not at once: " + waitedMillis + " ms");
        // The session still exists (expiry 60 s): end it.
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, "will-delayed", "00"));
            raw.readType(2);
        }
    }

    @Test
    @DisplayName("[MQTT-3.1.3-9] a reconnect before the Will Delay Interval passes cancels the will")
    void aReconnectInTimeCancelsTheWill() throws Exception {
        connectWithWill("will-back", 60, SESSION_EXPIRY_60, "18 00000003", "will/back").close();
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, false, 60, "will-back", "05 " + SESSION_EXPIRY_60));
            assertEquals(1, raw.readType(2)[2] & 0x01, "session resumed");
            assertTrue(Received.nothingWithin(wills, 5_000), "no will: the client came back within 3 s");
            raw.send(RawMqtt.packet(0xE0, new byte[] {0x00, 0x05, 0x11, 0, 0, 0, 0})); // normal, expiry 0
        }
        assertTrue(Received.nothingWithin(wills, 500), "and none after the normal DISCONNECT either");
    }

    @Test
    @DisplayName("[MQTT-3.1.2-8] the will is published when the session ends before its delay")
    void theWillIsPublishedWhenTheSessionEndsBeforeItsDelay() throws Exception {
        connectWithWill("will-short-session", 60, "11 00000002", "18 0000003c", "will/session").close();
        // Within Received.next's 20 s, long before the 60 s delay: at the end of the 2 s session.
        assertEquals("will/session", Received.next(wills).getTopic().toString());
    }
}
