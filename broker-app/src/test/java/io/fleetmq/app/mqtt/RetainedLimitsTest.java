package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster-wide bounds on retained messages: mqtt.max-retained-messages 3 and
 * mqtt.max-retained-bytes 1000 (payload and topic name).
 */
class RetainedLimitsTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("MQTT_MAX_RETAINED_MESSAGES", "3", "MQTT_MAX_RETAINED_BYTES", "1000"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static void retain(Mqtt5BlockingClient c, String topic, byte[] payload) {
        c.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(payload).send();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Subscribes to {@code filter}, then publishes a live marker on {@code markerTopic}: what arrives
     * before the marker is what the subscription got as retained messages. Returns their payloads.
     */
    private static java.util.List<String> retainedOnSubscribe(Mqtt5BlockingClient sub,
            Mqtt5BlockingClient.Mqtt5Publishes in, Mqtt5BlockingClient pub, String filter, String markerTopic)
            throws InterruptedException {
        sub.subscribeWith().topicFilter(filter).qos(MqttQos.AT_LEAST_ONCE).send();
        pub.publishWith().topic(markerTopic).qos(MqttQos.AT_LEAST_ONCE).payload(bytes("marker")).send();
        java.util.List<String> got = new java.util.ArrayList<>();
        while (true) {
            Mqtt5Publish m = Received.next(in);
            if (m.getTopic().toString().equals(markerTopic)) {
                break;
            }
            if (m.isRetain()) {
                got.add(new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8));
            }
        }
        sub.unsubscribeWith().topicFilter(filter).send();
        got.sort(null);
        return got;
    }

    @Test
    @DisplayName("beyond the retained bounds a new topic gets 0x97 (MQTT 5) or is not retained (3.1.1); replacing and deleting still work")
    void retainedMessagesAreBounded() throws Exception {
        Mqtt5BlockingClient pub = broker.connectedV5("lim-pub");
        Mqtt5BlockingClient sub = broker.connectedV5("lim-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            // Bytes: 900 + "lim/1" fits in 1000; another 200 on a new topic would not.
            retain(pub, "lim/1", new byte[900]);
            Mqtt5PubAckException tooMany = assertThrows(Mqtt5PubAckException.class,
                    () -> retain(pub, "lim/2", new byte[200]));
            assertEquals(Mqtt5PubAckReasonCode.QUOTA_EXCEEDED, tooMany.getMqttMessage().getReasonCode());
            assertEquals(1.0, broker.limitExceeded("retained_bytes"));
            // Replaced by a smaller one at the bound: accepted.
            retain(pub, "lim/1", bytes("one"));
            retain(pub, "lim/2", bytes("two"));
            retain(pub, "lim/3", bytes("three"));
            assertEquals(java.util.List.of("one", "three", "two"), retainedOnSubscribe(sub, in, pub, "lim/#", "lim/mark1"));

            // Count: three topics held, a fourth is refused and not delivered either.
            sub.subscribeWith().topicFilter("lim/4").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5PubAckException refused = assertThrows(Mqtt5PubAckException.class,
                    () -> retain(pub, "lim/4", bytes("four")));
            assertEquals(Mqtt5PubAckReasonCode.QUOTA_EXCEEDED, refused.getMqttMessage().getReasonCode());
            assertEquals(1.0, broker.limitExceeded("retained_messages"));
            // Replacing a topic's retained message at the bound works.
            retain(pub, "lim/2", bytes("two-b"));

            // MQTT 3.1.1 cannot be told: the message is delivered, not retained, and counted.
            Mqtt3BlockingClient v3 = broker.v3("lim-v3");
            v3.connect();
            v3.publishWith().topic("lim/4").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(bytes("v3")).send();
            Mqtt5Publish live = Received.next(in);
            assertEquals("v3", new String(live.getPayloadAsBytes(), StandardCharsets.UTF_8), "delivered live");
            assertFalse(live.isRetain());
            assertEquals(2.0, broker.limitExceeded("retained_messages"));
            sub.unsubscribeWith().topicFilter("lim/4").send();
            assertEquals(java.util.List.of("one", "three", "two-b"),
                    retainedOnSubscribe(sub, in, pub, "lim/#", "lim/mark2"), "lim/4 not retained");

            // Deleting makes room again.
            retain(pub, "lim/3", new byte[0]);
            retain(pub, "lim/4", bytes("four"));
            assertEquals(java.util.List.of("four", "one", "two-b"), retainedOnSubscribe(sub, in, pub, "lim/#", "lim/mark3"));
            assertTrue(broker.limitExceeded("retained_messages") == 2.0, "no refusal since");
            v3.disconnect();
        }
        for (String t : new String[] {"lim/1", "lim/2", "lim/4"}) {
            retain(pub, t, new byte[0]);
        }
        pub.disconnect();
        sub.disconnect();
    }
}
