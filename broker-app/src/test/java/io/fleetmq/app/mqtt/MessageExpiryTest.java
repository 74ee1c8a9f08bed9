package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Message Expiry Interval: counted down while a message waits, and an expired message is not sent. */
class MessageExpiryTest {

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
    @DisplayName("[MQTT-3.3.2-5] [MQTT-3.3.2-6] a queued message is forwarded with its expiry decremented; an expired one is not sent, and counted")
    void queuedMessagesExpire() throws Exception {
        Mqtt5BlockingClient sub = broker.v5("expiry-sub");
        sub.connectWith().sessionExpiryInterval(300).send();
        sub.subscribeWith().topicFilter("expiry/#").qos(MqttQos.AT_LEAST_ONCE).send();
        sub.disconnect();

        Mqtt5BlockingClient pub = broker.connectedV5("expiry-pub");
        pub.publishWith().topic("expiry/short").qos(MqttQos.AT_LEAST_ONCE).messageExpiryInterval(1)
                .payload("short".getBytes(StandardCharsets.UTF_8)).send();
        pub.publishWith().topic("expiry/long").qos(MqttQos.AT_LEAST_ONCE).messageExpiryInterval(60)
                .payload("long".getBytes(StandardCharsets.UTF_8)).send();
        pub.disconnect();
        long published = System.nanoTime();
        double expiredBefore = broker.dropped("expired");

        // The one thing to wait for here is the clock: the short message's second must pass while
        // both messages wait in the offline session.
        Await.until(Duration.ofSeconds(10), "2.1 s to pass after publishing",
                () -> System.nanoTime() - published > 2_100_000_000L);

        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            assertTrue(sub.connectWith().cleanStart(false).sessionExpiryInterval(300).send().isSessionPresent());
            Mqtt5Publish m = Received.next(in);
            assertEquals("expiry/long", m.getTopic().toString(), "[MQTT-3.3.2-5] the expired message is not sent");
            long left = m.getMessageExpiryInterval().orElseThrow();
            assertTrue(left <= 58, "[MQTT-3.3.2-6] 60 s minus the 2 s it waited, got " + left);
            assertTrue(Received.nothingWithin(in, 500));
        }
        Await.until(Duration.ofSeconds(5), "the expired message to be counted",
                () -> broker.dropped("expired") > expiredBefore);
        sub.disconnectWith().sessionExpiryInterval(0).send();
    }

    @Test
    @DisplayName("3.3.2.3.3 a message without Message Expiry Interval is forwarded without one")
    void noExpiryStaysNoExpiry() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("noexp-sub");
        Mqtt5BlockingClient pub = broker.connectedV5("noexp-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("noexp/t").qos(MqttQos.AT_LEAST_ONCE).send();
            pub.publishWith().topic("noexp/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            assertFalse(Received.next(in).getMessageExpiryInterval().isPresent());
        }
        sub.disconnect();
        pub.disconnect();
    }
}
