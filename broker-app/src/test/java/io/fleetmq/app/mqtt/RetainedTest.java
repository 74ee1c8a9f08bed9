package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retained messages: stored, replaced and deleted through Kafka, sent on subscribe, never to a
 * shared subscription, and expiring with their Message Expiry Interval. A subscription on the node
 * that acknowledged a retained PUBLISH sees it from the PUBACK on; a subscription may also get the
 * live copy (RETAIN clear) of a PUBLISH routed after it was made, which the helpers skip.
 */
class RetainedTest {

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

    /**
     * Subscribes to {@code filter} (Retain Handling 0) and unsubscribes again until a retained
     * message with {@code payload} arrives; fails after 50 tries. Leaves no subscription behind.
     */
    static Mqtt5Publish awaitRetained(Mqtt5BlockingClient c, Mqtt5BlockingClient.Mqtt5Publishes in, String filter,
                                      String payload) throws InterruptedException {
        for (int attempt = 0; attempt < 50; attempt++) {
            c.subscribeWith().topicFilter(filter).qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5Publish m = in.receive(500, TimeUnit.MILLISECONDS).orElse(null);
            c.unsubscribeWith().topicFilter(filter).send();
            if (m != null && m.isRetain() && payload.equals(new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8))) {
                // Earlier attempts may still deliver: a retained copy, or the message itself if it was
                // routed after the first subscription (routing follows the PUBACK). Let them arrive and
                // discard them, so the caller's next receive sees only what its own next step causes.
                while (in.receive(500, TimeUnit.MILLISECONDS).isPresent()) {
                    // discarded
                }
                return m;
            }
        }
        throw new AssertionError("no retained '" + payload + "' on subscribing to " + filter);
    }

    /** True once a fresh subscription to {@code filter} gets no retained message. */
    private static boolean noRetained(Mqtt5BlockingClient c, Mqtt5BlockingClient.Mqtt5Publishes in, String filter)
            throws InterruptedException {
        c.subscribeWith().topicFilter(filter).qos(MqttQos.AT_LEAST_ONCE).send();
        boolean none = in.receive(300, TimeUnit.MILLISECONDS).isEmpty();
        c.unsubscribeWith().topicFilter(filter).send();
        return none;
    }

    private static void awaitNoRetained(Mqtt5BlockingClient c, Mqtt5BlockingClient.Mqtt5Publishes in, String filter,
                                        String what) {
        Await.until(Duration.ofSeconds(30), what, () -> {
            try {
                return noRetained(c, in, filter);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    @DisplayName("[MQTT-3.3.1-5] [MQTT-3.3.1-9] [MQTT-3.3.1-6] [MQTT-3.3.1-7] sent on subscribe with RETAIN set; an empty payload deletes it")
    void retainedMessagesAreSentOnSubscribeAndAnEmptyPayloadDeletesThem() throws Exception {
        Mqtt5BlockingClient pub = broker.connectedV5("ret-pub");
        pub.publishWith().topic("ret/a").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload("kept".getBytes()).send();

        Mqtt5BlockingClient sub = broker.connectedV5("ret-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            // The retained index follows Kafka, so a subscription made right after the publish may
            // still get the live copy (retain flag clear, [MQTT-3.3.1-12]); a fresh subscription
            // after that gets the retained one.
            Mqtt5Publish m = awaitRetained(sub, publishes, "ret/#", "kept");
            assertTrue(m.isRetain(), "[MQTT-3.3.1-9] retained message, retain flag set, on subscribe");
            assertEquals("kept", new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8));
        }
        pub.publishWith().topic("ret/a").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[0]).send();
        Mqtt5BlockingClient late = broker.connectedV5("ret-late");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = late.publishes(MqttGlobalPublishFilter.ALL)) {
            boolean gone = false;
            for (int attempt = 0; attempt < 50 && !gone; attempt++) {
                gone = noRetained(late, publishes, "ret/#");
            }
            assertTrue(gone, "[MQTT-3.3.1-6] an empty retained payload removes the retained message");
        }
        pub.disconnect();
        sub.disconnect();
        late.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.1-5] [MQTT-3.3.1-8] a retained PUBLISH replaces the topic's retained message; a non-retained one does not")
    void aRetainedPublishReplacesANonRetainedOneDoesNot() throws Exception {
        Mqtt5BlockingClient pub = broker.connectedV5("replace-pub");
        pub.publishWith().topic("replace/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload("v1".getBytes()).send();
        pub.publishWith().topic("replace/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload("v2".getBytes()).send();
        pub.publishWith().topic("replace/t").qos(MqttQos.AT_LEAST_ONCE).payload("live".getBytes()).send();
        Mqtt5BlockingClient sub = broker.connectedV5("replace-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            awaitRetained(sub, in, "replace/#", "v2");
            // Once v2 is seen, a fresh subscription gets v2 and only v2: v1 was replaced, "live" not stored.
            sub.subscribeWith().topicFilter("replace/#").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5Publish m = Received.next(in);
            assertEquals("v2", new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8));
            assertTrue(m.isRetain());
            assertTrue(Received.nothingWithin(in, 1_000), "one retained message per topic");
        }
        pub.publishWith().topic("replace/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[0]).send();
        pub.disconnect();
        sub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.2-5] [MQTT-3.3.2-6] a retained message counts down its expiry while stored and is gone when it passed")
    void retainedMessagesExpire() throws Exception {
        Mqtt5BlockingClient pub = broker.connectedV5("exp-ret-pub");
        pub.publishWith().topic("expret/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).messageExpiryInterval(5)
                .payload("short".getBytes()).send();
        Mqtt5BlockingClient sub = broker.connectedV5("exp-ret-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            Mqtt5Publish m = awaitRetained(sub, in, "expret/#", "short");
            long left = m.getMessageExpiryInterval().orElseThrow();
            assertTrue(left <= 5 && left > 0, "the remaining interval, not the original: " + left);
            awaitNoRetained(sub, in, "expret/#", "the retained message to expire");
        }
        pub.disconnect();
        sub.disconnect();
    }

    @Test
    @DisplayName("4.8.2 a shared subscription gets no retained messages when it is made")
    void sharedSubscriptionsGetNoRetainedMessages() throws Exception {
        Mqtt5BlockingClient pub = broker.connectedV5("shared-ret-pub");
        pub.publishWith().topic("sharedret/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload("r".getBytes()).send();
        Mqtt5BlockingClient sub = broker.connectedV5("shared-ret-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            awaitRetained(sub, in, "sharedret/#", "r"); // it is stored and would be sent to a plain subscription
            sub.subscribeWith().topicFilter("$share/g/sharedret/#").qos(MqttQos.AT_LEAST_ONCE).send();
            assertTrue(Received.nothingWithin(in, 1_000), "nothing for the shared subscription");
        }
        pub.publishWith().topic("sharedret/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[0]).send();
        pub.disconnect();
        sub.disconnect();
    }

    /** The first retained message that arrives, skipping live copies (retain flag clear); fails after 20 s. */
    private static Mqtt5Publish nextRetained(Mqtt5BlockingClient.Mqtt5Publishes in) throws InterruptedException {
        while (true) {
            Mqtt5Publish m = Received.next(in);
            if (m.isRetain()) {
                return m;
            }
        }
    }

    @Test
    @DisplayName("[MQTT-3.3.1-5] [MQTT-3.3.1-9] a SUBSCRIBE on the acknowledging node right after the PUBACK gets the retained message")
    void aSubscribeRightAfterThePubackGetsTheRetainedMessage() throws Exception {
        Mqtt5BlockingClient pub = broker.connectedV5("ack-pub");
        Mqtt5BlockingClient sub = broker.connectedV5("ack-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            for (int round = 0; round < 300; round++) {
                String payload = "r" + round;
                pub.publishWith().topic("ack/t").qos(MqttQos.AT_LEAST_ONCE).retain(true)
                        .payload(payload.getBytes(StandardCharsets.UTF_8)).send(); // returns with the PUBACK
                sub.subscribeWith().topicFilter(round % 2 == 0 ? "ack/t" : "ack/+").qos(MqttQos.AT_LEAST_ONCE).send();
                Mqtt5Publish m = nextRetained(in);
                assertEquals(payload, new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8),
                        "round " + round + ": the retained message acknowledged just before, not an older one");
                sub.unsubscribeWith().topicFilter(round % 2 == 0 ? "ack/t" : "ack/+").send();
            }
            for (int round = 0; round < 20; round++) {
                // Deleted and set again: a deletion acknowledged before the SUBSCRIBE is seen as well.
                pub.publishWith().topic("ack/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[0]).send();
                sub.subscribeWith().topicFilter("ack/#").qos(MqttQos.AT_LEAST_ONCE).send();
                // Retained messages are queued with the SUBACK, before any live message: a retained
                // message before this marker would have been sent for the subscription.
                pub.publishWith().topic("ack/marker").qos(MqttQos.AT_LEAST_ONCE).payload("m".getBytes()).send();
                Mqtt5Publish first = Received.next(in);
                while (!first.isRetain() && !first.getTopic().toString().equals("ack/marker")) {
                    first = Received.next(in); // a live copy of an earlier round's retained PUBLISH
                }
                assertEquals("ack/marker", first.getTopic().toString(),
                        "deletion round " + round + ": no retained message after the deleting PUBACK");
                sub.unsubscribeWith().topicFilter("ack/#").send();
                pub.publishWith().topic("ack/t").qos(MqttQos.AT_LEAST_ONCE).retain(true)
                        .payload(("d" + round).getBytes(StandardCharsets.UTF_8)).send();
            }
        }
        pub.publishWith().topic("ack/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[0]).send();
        pub.disconnect();
        sub.disconnect();
    }
}
