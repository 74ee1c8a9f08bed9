package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The receive state of inbound QoS 2 flows of a persistent session outlives the node's memory of
 * it: a node started anew (same Kafka, Redis and topics) answers the client's resend with PUBREC and
 * does not store it again. A clean start ends that state with the session.
 */
class Qos2ReceiptsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String EXPIRY_300 = "05 11 0000012C";
    private static final int PUBREC = 5;
    private static final int PUBCOMP = 7;

    @TempDir
    Path dataDir;

    private final String prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + ".";
    private TestBroker broker;

    @AfterEach
    void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    private TestBroker start() {
        broker = TestBroker.start(dataDir, Map.of("KAFKA_TOPIC_PREFIX", prefix));
        return broker;
    }

    private static int reasonCode(byte[] ack) {
        return ack[1] > 2 ? ack[4] & 0xFF : 0;
    }

    private static RawMqtt connect(TestBroker b, String clientId, boolean cleanStart, boolean sessionPresent)
            throws Exception {
        RawMqtt raw = b.raw();
        raw.send(RawMqtt.connect(5, cleanStart, 60, clientId, EXPIRY_300));
        RawMqtt.ConnAck ack = RawMqtt.parseConnAckV5(raw.readType(2));
        assertEquals(0, ack.reasonCode());
        assertEquals(sessionPresent, ack.sessionPresent(), "session present");
        return raw;
    }

    private static Mqtt5BlockingClient subscriber(TestBroker b, List<String> received, boolean cleanStart) {
        Mqtt5BlockingClient sub = b.v5("rc-sub");
        sub.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> received.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
        sub.connectWith().cleanStart(cleanStart).sessionExpiryInterval(300).send();
        return sub;
    }

    @Test
    @DisplayName("[MQTT-4.3.3-10] a resend after the session moved to a node without memory of it is acknowledged, not stored again")
    void aResendToANewNodeIsAcknowledgedAndNotStoredAgain() throws Exception {
        List<String> received = new CopyOnWriteArrayList<>();
        start();
        Mqtt5BlockingClient sub = subscriber(broker, received, true);
        // QoS 0 to the subscriber: a QoS 1/2 delivery still in flight when the first node stops would
        // rightly be sent again, with DUP, to the subscriber's new client instance, which cannot know it
        // had it. What is checked is the publisher's side: a second copy stored would arrive live.
        sub.subscribeWith().topicFilter("rc/#").qos(MqttQos.AT_MOST_ONCE).send();
        byte[] publish = RawMqtt.publishV5("rc/data", 2, 5, "once".getBytes(StandardCharsets.UTF_8));
        try (RawMqtt pub = connect(broker, "rc-pub", true, false)) {
            pub.send(publish);
            assertEquals(0, reasonCode(pub.readType(PUBREC)));
            // The client leaves without PUBREL: the flow waits for it in the session.
        }
        Await.until(WAIT, "the message at the subscriber", () -> received.contains("once"));
        broker.close(); // the sessions stay; the next node knows nothing of them but what is shared

        start();
        Mqtt5BlockingClient again = subscriber(broker, received, false);
        try (RawMqtt pub = connect(broker, "rc-pub", false, true)) {
            publish[0] |= 0x08; // DUP
            pub.send(publish);
            assertEquals(0, reasonCode(pub.readType(PUBREC)), "PUBREC for the resend");
            pub.send(RawMqtt.ack(0x62, 5));
            assertEquals(0, reasonCode(pub.readType(PUBCOMP)), "[MQTT-4.3.3-11] PUBCOMP: the identifier was known");
            pub.send(RawMqtt.publishV5("rc/data", 1, 6, "marker".getBytes(StandardCharsets.UTF_8)));
            pub.readType(4);
        }
        Await.until(WAIT, "the marker at the subscriber", () -> received.contains("marker"));
        assertEquals(1, received.stream().filter("once"::equals).count(), "delivered once: " + received);
        again.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-4] a clean start ends the session's QoS 2 state: the identifier is free for a new message")
    void aCleanStartEndsTheQos2State() throws Exception {
        List<String> received = new CopyOnWriteArrayList<>();
        start();
        Mqtt5BlockingClient sub = subscriber(broker, received, true);
        sub.subscribeWith().topicFilter("rc/#").qos(MqttQos.EXACTLY_ONCE).send();
        try (RawMqtt pub = connect(broker, "rc-clean", false, false)) {
            pub.send(RawMqtt.publishV5("rc/clean", 2, 5, "first".getBytes(StandardCharsets.UTF_8)));
            assertEquals(0, reasonCode(pub.readType(PUBREC)));
        }
        try (RawMqtt pub = connect(broker, "rc-clean", true, false)) {
            pub.send(RawMqtt.ack(0x62, 5));
            assertEquals(0x92, reasonCode(pub.readType(PUBCOMP)), "the old flow ended with the session");
            byte[] second = RawMqtt.publishV5("rc/clean", 2, 5, "second".getBytes(StandardCharsets.UTF_8));
            second[0] |= 0x08; // even a DUP with the old identifier is a message of the new session
            pub.send(second);
            assertEquals(0, reasonCode(pub.readType(PUBREC)));
            pub.send(RawMqtt.ack(0x62, 5));
            pub.readType(PUBCOMP);
        }
        Await.until(WAIT, "both messages at the subscriber", () -> received.contains("second"));
        assertTrue(received.contains("first"));
        sub.disconnect();
    }
}
