package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import io.fleetmq.app.support.Received;
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
 * Session Expiry Interval: 0 ends the session with the connection, N seconds keeps it that long
 * after, 0xFFFFFFFF keeps it; clean start discards it. Whether a session exists is read from
 * CONNACK's Session Present, its end from the {@code session_ended} drops in {@code /metrics}.
 */
class SessionExpiryTest {

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
    @DisplayName("[MQTT-3.1.2-23] [MQTT-3.2.2-3] a persistent session keeps its subscriptions and queues QoS 1 while offline")
    void aPersistentSessionKeepsSubscriptionsAndQueuesQos1WhileOffline() throws Exception {
        Mqtt5BlockingClient sub = broker.v5("persistent-sub");
        Mqtt5ConnAck ack = sub.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        assertFalse(ack.isSessionPresent());
        sub.subscribeWith().topicFilter("persist/#").qos(MqttQos.AT_LEAST_ONCE).send();
        sub.disconnect();

        Mqtt5BlockingClient pub = broker.connectedV5("persistent-pub");
        for (int i = 0; i < 5; i++) {
            pub.publishWith().topic("persist/" + i).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
        }
        pub.disconnect();

        Mqtt5BlockingClient back = broker.v5("persistent-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = back.publishes(MqttGlobalPublishFilter.ALL)) {
            ack = back.connectWith().cleanStart(false).sessionExpiryInterval(300).send();
            assertTrue(ack.isSessionPresent(), "[MQTT-3.2.2-3] session present on resume");
            for (int i = 0; i < 5; i++) {
                assertArrayEquals(new byte[] {(byte) i}, Received.next(publishes).getPayloadAsBytes(), "in order");
            }
        }
        back.disconnectWith().sessionExpiryInterval(0).send();
    }

    @Test
    @DisplayName("3.1.2.11.2 a session with expiry 0 is gone after DISCONNECT")
    void aSessionWithExpiryZeroIsGoneAfterDisconnect() throws Exception {
        Mqtt5BlockingClient c = broker.v5("short-lived");
        c.connectWith().sessionExpiryInterval(0).send();
        c.subscribeWith().topicFilter("short/t").send();
        c.disconnect();
        Mqtt5BlockingClient again = broker.v5("short-lived");
        assertFalse(again.connectWith().cleanStart(false).send().isSessionPresent(), "[MQTT-3.1.2-23]");
        again.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-23] [MQTT-4.1.0-2] a session with expiry 2 s resumes within it and is gone after it")
    void aSessionLastsItsExpiryInterval() throws Exception {
        Mqtt5BlockingClient c = broker.v5("two-seconds");
        c.connectWith().sessionExpiryInterval(2).send();
        c.subscribeWith().topicFilter("two/t").qos(MqttQos.AT_LEAST_ONCE).send();
        c.disconnect();
        long left = System.nanoTime();

        Mqtt5ConnAck resumed = c.connectWith().cleanStart(false).sessionExpiryInterval(2).send();
        long awayMillis = (System.nanoTime() - left) / 1_000_000;
        assertTrue(resumed.isSessionPresent(), "resumed within the interval (away " + awayMillis + " ms)");
        Mqtt5BlockingClient pub = broker.connectedV5("two-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = c.publishes(MqttGlobalPublishFilter.ALL)) {
            pub.publishWith().topic("two/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            assertArrayEquals(new byte[] {2}, Received.next(in).getPayloadAsBytes(), "its subscription came back");
        }
        c.disconnect();

        // A message queued for the offline session is discarded, and counted, when the session ends.
        double endedBefore = broker.dropped("session_ended");
        pub.publishWith().topic("two/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {3}).send();
        Await.until(Duration.ofSeconds(20), "the session to expire with its queued message",
                () -> broker.dropped("session_ended") > endedBefore);
        Mqtt5ConnAck after = c.connectWith().cleanStart(false).send();
        assertFalse(after.isSessionPresent(), "[MQTT-4.1.0-2] discarded once the interval passed");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = c.publishes(MqttGlobalPublishFilter.ALL)) {
            pub.publishWith().topic("two/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {4}).send();
            assertTrue(Received.nothingWithin(in, 1_000), "its subscription and queue went with it");
        }
        c.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("3.2.2.3.2 Session Expiry 0xFFFFFFFF is lowered to mqtt.max-session-expiry (7 days by default), told in CONNACK")
    void aSessionThatNeverExpiresIsBoundedBySevenDays() throws Exception {
        Mqtt5BlockingClient c = broker.v5("forever");
        Mqtt5ConnAck ack = c.connectWith().noSessionExpiry().send();
        assertEquals(604_800L, ack.getSessionExpiryInterval().orElseThrow(), "the default bound, 7 days");
        c.subscribeWith().topicFilter("forever/t").send();
        c.disconnect();
        assertTrue(c.connectWith().cleanStart(false).noSessionExpiry().send().isSessionPresent());
        c.disconnectWith().sessionExpiryInterval(0).send();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-4] [MQTT-3.2.2-2] clean start discards the existing session")
    void cleanStartDiscardsTheSession() throws Exception {
        Mqtt5BlockingClient c = broker.v5("clean-again");
        c.connectWith().sessionExpiryInterval(300).send();
        c.subscribeWith().topicFilter("clean/t").qos(MqttQos.AT_LEAST_ONCE).send();
        c.disconnect();
        assertFalse(c.connectWith().cleanStart(true).sessionExpiryInterval(300).send().isSessionPresent());
        Mqtt5BlockingClient pub = broker.connectedV5("clean-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = c.publishes(MqttGlobalPublishFilter.ALL)) {
            pub.publishWith().topic("clean/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            assertTrue(Received.nothingWithin(in, 1_000), "the old subscription went with the session");
        }
        c.disconnectWith().sessionExpiryInterval(0).send();
        pub.disconnect();
    }

    @Test
    @DisplayName("3.14.2.2.2 a Session Expiry on DISCONNECT after 0 on CONNECT: DISCONNECT 0x82 from the server")
    void sessionExpiryCannotBeSetOnDisconnectAfterZero() throws Exception {
        try (RawMqtt raw = broker.rawV5("expiry-late")) {
            raw.send(RawMqtt.packet(0xE0, new byte[] {0x00, 0x05, 0x11, 0, 0, 0, 60}));
            byte[] disconnect = raw.readType(14);
            assertEquals(0x82, disconnect[2] & 0xFF);
            assertTrue(raw.closedByBroker());
        }
    }
}
