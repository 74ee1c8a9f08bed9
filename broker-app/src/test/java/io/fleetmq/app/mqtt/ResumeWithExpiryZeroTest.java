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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A persistent session resumed with Clean Start 0 and Session Expiry Interval 0 is present, and
 * gets what was queued for it while it was away: the queue belongs to the session until the session
 * ends. The new expiry only decides what happens when this connection closes. DEVICE sessions queue
 * in Redis, APPLICATION sessions ({@code app-} here) in their Kafka backlog.
 */
class ResumeWithExpiryZeroTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("APPLICATION_CLIENT_ID_PATTERN", "app-.*"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static MqttQos qos(int q) {
        return MqttQos.fromCode(q);
    }

    private static String text(Mqtt5Publish p) {
        return new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8);
    }

    /** Subscribes with a persistent session at {@code q}, then leaves. */
    private static void subscribeAndLeave(String id, String filter, int q) {
        Mqtt5BlockingClient sub = broker.v5(id);
        assertFalse(sub.connectWith().cleanStart(true).sessionExpiryInterval(300).send().isSessionPresent());
        sub.subscribeWith().topicFilter(filter).qos(qos(q)).send();
        sub.disconnect();
    }

    @ParameterizedTest(name = "{0} at QoS {1}")
    @CsvSource({"dev-resume-q1, 1", "dev-resume-q2, 2", "app-resume-q1, 1", "app-resume-q2, 2"})
    void queuedMessagesAreDeliveredOnResumeWithExpiryZero(String id, int q) throws Exception {
        String topic = "resume0/" + id;
        subscribeAndLeave(id, topic, q);
        Mqtt5BlockingClient pub = broker.connectedV5(id + "-pub");
        for (int i = 0; i < 5; i++) {
            pub.publishWith().topic(topic).qos(qos(q)).payload(Integer.toString(i).getBytes(StandardCharsets.UTF_8))
                    .send();
        }
        pub.disconnect();

        Mqtt5BlockingClient back = broker.v5(id);
        try (Mqtt5BlockingClient.Mqtt5Publishes in = back.publishes(MqttGlobalPublishFilter.ALL)) {
            assertTrue(back.connectWith().cleanStart(false).send().isSessionPresent(),
                    "[MQTT-3.2.2-3] the session is resumed");
            for (int i = 0; i < 5; i++) {
                Mqtt5Publish m = Received.next(in);
                assertEquals(Integer.toString(i), text(m), "queued message " + i + ", in order");
                assertEquals(qos(q), m.getQos());
            }
            assertTrue(Received.nothingWithin(in, 500), "each queued message once");
        }
        back.disconnect();

        // Expiry 0 ended the session when that connection closed.
        Mqtt5BlockingClient after = broker.v5(id);
        assertFalse(after.connectWith().cleanStart(false).send().isSessionPresent(), "the session ended with expiry 0");
        after.disconnect();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"dev-resume-expiry", "app-resume-expiry"})
    void queuedMessagesKeepTheirRemainingExpiryAndExpiredOnesAreNotSent(String id) throws Exception {
        String topic = "resume0/" + id;
        subscribeAndLeave(id, topic, 1);
        Mqtt5BlockingClient pub = broker.connectedV5(id + "-pub");
        pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).messageExpiryInterval(1)
                .payload("short".getBytes(StandardCharsets.UTF_8)).send();
        pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).messageExpiryInterval(60)
                .payload("long".getBytes(StandardCharsets.UTF_8)).send();
        pub.disconnect();
        long published = System.nanoTime();
        // The clock is what this waits for: the short message's second must pass while it is queued.
        Await.until(Duration.ofSeconds(10), "2.1 s to pass after publishing",
                () -> System.nanoTime() - published > 2_100_000_000L);

        Mqtt5BlockingClient back = broker.v5(id);
        try (Mqtt5BlockingClient.Mqtt5Publishes in = back.publishes(MqttGlobalPublishFilter.ALL)) {
            assertTrue(back.connectWith().cleanStart(false).send().isSessionPresent());
            Mqtt5Publish m = Received.next(in);
            assertEquals("long", text(m), "[MQTT-3.3.2-5] the expired message is not sent");
            long left = m.getMessageExpiryInterval().orElseThrow();
            assertTrue(left <= 58 && left > 0, "[MQTT-3.3.2-6] 60 s minus the time it waited, got " + left);
            assertTrue(Received.nothingWithin(in, 500));
        }
        back.disconnect();
    }
}
