package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.subscribe.Mqtt5RetainHandling;
import com.hivemq.client.mqtt.mqtt5.message.unsubscribe.unsuback.Mqtt5UnsubAck;
import com.hivemq.client.mqtt.mqtt5.message.unsubscribe.unsuback.Mqtt5UnsubAckReasonCode;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
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

/**
 * SUBSCRIBE and UNSUBSCRIBE: filters and wildcards, $-topics, the subscription options No Local,
 * Retain As Published and Retain Handling, subscription identifiers on the wire, overlapping
 * subscriptions.
 */
class SubscribeTest {

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
    @DisplayName("[MQTT-4.7.1-1] [MQTT-4.7.1-2] [MQTT-4.7.2-1] wildcards match levels; '#' does not match a topic starting with '$'")
    void wildcardsMatchLevelsAndDollarTopicsAreNotMatchedByALeadingWildcard() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("wild-sub");
        Mqtt5BlockingClient pub = broker.connectedV5("wild-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            // Retain Handling 2: other tests' retained messages are not sent on subscribe.
            sub.subscribeWith().topicFilter("#").qos(MqttQos.AT_LEAST_ONCE)
                    .retainHandling(Mqtt5RetainHandling.DO_NOT_SEND).send();
            sub.subscribeWith().topicFilter("wild/+/temp").qos(MqttQos.AT_LEAST_ONCE).send();
            // [MQTT-4.7.2-1] '#' does not match a topic starting with '$'.
            pub.publishWith().topic("$internal/x").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {0}).send();
            pub.publishWith().topic("wild/dev1/temp").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            Mqtt5Publish first = Received.next(publishes);
            assertEquals("wild/dev1/temp", first.getTopic().toString(), "the $ topic was not delivered");
            // Two overlapping subscriptions: one copy [MQTT-3.3.4-2].
            pub.publishWith().topic("wild/after").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            assertEquals("wild/after", Received.next(publishes).getTopic().toString());
        }
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-4.7.2-1] a filter naming the $-topic explicitly does match it")
    void dollarTopicsMatchFiltersThatNameThem() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("dollar-sub");
        Mqtt5BlockingClient pub = broker.connectedV5("dollar-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("$app/+/state").qos(MqttQos.AT_LEAST_ONCE).send();
            pub.publishWith().topic("$app/x/state").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            assertEquals("$app/x/state", Received.next(publishes).getTopic().toString());
        }
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.8.4-5] [MQTT-3.8.4-6] [MQTT-3.9.3-1] an invalid filter gets 0x8F for that filter only, in order")
    void anInvalidFilterFailsAloneInTheSubAck() throws Exception {
        try (RawMqtt raw = broker.rawV5("bad-filter")) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.writeBytes(new byte[] {0, 5, 0}); // packet id 5, no properties
            RawMqtt.writeString(body, "ok/+/t");
            body.write(1);
            RawMqtt.writeString(body, "bad/#/t"); // '#' not last [MQTT-4.7.1-1]
            body.write(1);
            RawMqtt.writeString(body, "bad+");    // '+' not a whole level
            body.write(0);
            RawMqtt.writeString(body, "ok/#");
            body.write(2);
            raw.send(RawMqtt.packet(0x82, body.toByteArray()));
            byte[] suback = raw.readType(9);
            assertEquals(5, suback[3], "[MQTT-3.8.4-2] same packet identifier");
            // 90 len | id id | props-len 0 | codes
            assertArrayEquals(new byte[] {0x01, (byte) 0x8F, (byte) 0x8F, 0x02},
                    java.util.Arrays.copyOfRange(suback, suback.length - 4, suback.length));
        }
    }

    @Test
    @DisplayName("[MQTT-3.3.4-2] overlapping subscriptions deliver one copy at the highest QoS")
    void overlappingSubscriptionsDeliverOneCopyAtTheHighestQos() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("ids-sub");
        Mqtt5BlockingClient pub = broker.connectedV5("ids-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("ids/+").qos(MqttQos.AT_MOST_ONCE).send();
            sub.subscribeWith().topicFilter("ids/#").qos(MqttQos.AT_LEAST_ONCE).send();
            pub.publishWith().topic("ids/a").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            Mqtt5Publish m = Received.next(publishes);
            assertEquals(MqttQos.AT_LEAST_ONCE, m.getQos(), "the highest granted QoS [MQTT-3.3.4-2]");
            assertTrue(Received.nothingWithin(publishes, 1_000), "exactly one copy");
        }
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.4-3] [MQTT-3.3.4-4] one copy carries the Subscription Identifiers of all matching subscriptions")
    void subscriptionIdentifiersOnTheWire() throws Exception {
        try (RawMqtt raw = broker.rawV5("sid-sub")) {
            raw.send(RawMqtt.subscribeV5(1, 7, "sid/+", 0));
            raw.readType(9);
            raw.send(RawMqtt.subscribeV5(2, 300, "sid/#", 1)); // 300 takes two bytes on the wire
            raw.readType(9);
            raw.send(RawMqtt.subscribeV5(3, "sid/only/#", 1)); // no identifier
            raw.readType(9);
            Mqtt5BlockingClient pub = broker.connectedV5("sid-pub");
            pub.publishWith().topic("sid/a").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
            assertEquals(1, p.qos(), "[MQTT-3.3.4-2] highest QoS");
            assertEquals(Set.of(7L, 300L), new HashSet<>(p.properties().all(0x0B)), "order is not significant");
            assertEquals(2, p.properties().all(0x0B).size());
            raw.send(RawMqtt.ack(0x40, p.packetId()));

            pub.publishWith().topic("sid/only/x").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            RawMqtt.Publish q = RawMqtt.parsePublishV5(raw.readType(3));
            assertEquals(List.of(300L), q.properties().all(0x0B), "only the matching subscription that has one");
            raw.send(RawMqtt.ack(0x40, q.packetId()));
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("[MQTT-3.8.3-3] No Local: the subscriber's own messages are not sent back to it")
    void noLocalSkipsTheSubscribersOwnMessages() throws Exception {
        Mqtt5BlockingClient c = broker.connectedV5("nolocal");
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = c.publishes(MqttGlobalPublishFilter.ALL)) {
            c.subscribeWith().topicFilter("nolocal/t").qos(MqttQos.AT_LEAST_ONCE).noLocal(true).send();
            c.publishWith().topic("nolocal/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            Mqtt5BlockingClient other = broker.connectedV5("nolocal-other");
            other.publishWith().topic("nolocal/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            assertArrayEquals(new byte[] {2}, Received.next(publishes).getPayloadAsBytes(), "[MQTT-3.8.3-3]");
            other.disconnect();
        }
        c.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.1-12] [MQTT-3.3.1-13] Retain As Published keeps the RETAIN flag of a live message; without it the flag is 0")
    void retainAsPublished() throws Exception {
        Mqtt5BlockingClient keep = broker.connectedV5("rap-keep");
        Mqtt5BlockingClient clear = broker.connectedV5("rap-clear");
        Mqtt5BlockingClient pub = broker.connectedV5("rap-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes keepIn = keep.publishes(MqttGlobalPublishFilter.ALL);
             Mqtt5BlockingClient.Mqtt5Publishes clearIn = clear.publishes(MqttGlobalPublishFilter.ALL)) {
            keep.subscribeWith().topicFilter("rap/t").qos(MqttQos.AT_LEAST_ONCE).retainAsPublished(true).send();
            clear.subscribeWith().topicFilter("rap/t").qos(MqttQos.AT_LEAST_ONCE).send();
            pub.publishWith().topic("rap/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[] {1}).send();
            assertTrue(Received.next(keepIn).isRetain(), "[MQTT-3.3.1-13]");
            assertFalse(Received.next(clearIn).isRetain(), "[MQTT-3.3.1-12]");
        }
        pub.publishWith().topic("rap/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[0]).send();
        keep.disconnect();
        clear.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.3.1-9] [MQTT-3.3.1-10] [MQTT-3.3.1-11] [MQTT-3.8.4-4] Retain Handling 0, 1 and 2")
    void retainHandling() throws Exception {
        Mqtt5BlockingClient pub = broker.connectedV5("rh-pub");
        pub.publishWith().topic("rh/t").qos(MqttQos.AT_LEAST_ONCE).retain(true)
                .payload("kept".getBytes(StandardCharsets.UTF_8)).send();
        Mqtt5BlockingClient c = broker.connectedV5("rh-sub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = c.publishes(MqttGlobalPublishFilter.ALL)) {
            RetainedTest.awaitRetained(c, in, "rh/#", "kept");
            // 0: sent on every subscribe, also when the subscription exists and is replaced.
            c.subscribeWith().topicFilter("rh/#").qos(MqttQos.AT_LEAST_ONCE)
                    .retainHandling(Mqtt5RetainHandling.SEND).send();
            assertTrue(Received.next(in).isRetain(), "RH 0, new subscription");
            c.subscribeWith().topicFilter("rh/#").qos(MqttQos.AT_LEAST_ONCE)
                    .retainHandling(Mqtt5RetainHandling.SEND).send();
            assertTrue(Received.next(in).isRetain(), "RH 0, replaced subscription [MQTT-3.8.4-4]");
            c.unsubscribeWith().topicFilter("rh/#").send();

            // 1: only when the subscription did not exist.
            c.subscribeWith().topicFilter("rh/#").qos(MqttQos.AT_LEAST_ONCE)
                    .retainHandling(Mqtt5RetainHandling.SEND_IF_SUBSCRIPTION_DOES_NOT_EXIST).send();
            assertTrue(Received.next(in).isRetain(), "RH 1, new subscription");
            c.subscribeWith().topicFilter("rh/#").qos(MqttQos.AT_LEAST_ONCE)
                    .retainHandling(Mqtt5RetainHandling.SEND_IF_SUBSCRIPTION_DOES_NOT_EXIST).send();
            assertTrue(Received.nothingWithin(in, 1_000), "RH 1, existing subscription: nothing");
            c.unsubscribeWith().topicFilter("rh/#").send();

            // 2: never at subscribe time.
            c.subscribeWith().topicFilter("rh/#").qos(MqttQos.AT_LEAST_ONCE)
                    .retainHandling(Mqtt5RetainHandling.DO_NOT_SEND).send();
            assertTrue(Received.nothingWithin(in, 1_000), "RH 2: nothing");
        }
        pub.publishWith().topic("rh/t").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload(new byte[0]).send();
        c.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.8.4-8] a message is delivered at the lower of its QoS and the granted QoS")
    void deliveryQosIsTheMinimum() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("min-sub");
        Mqtt5BlockingClient pub = broker.connectedV5("min-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("min/q1").qos(MqttQos.AT_LEAST_ONCE).send();
            pub.publishWith().topic("min/q1").qos(MqttQos.EXACTLY_ONCE).payload(new byte[] {1}).send();
            assertEquals(MqttQos.AT_LEAST_ONCE, Received.next(in).getQos());
            pub.publishWith().topic("min/q1").qos(MqttQos.AT_MOST_ONCE).payload(new byte[] {2}).send();
            assertEquals(MqttQos.AT_MOST_ONCE, Received.next(in).getQos());
        }
        sub.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.10.4-1] [MQTT-3.10.4-2] [MQTT-3.10.4-5] UNSUBSCRIBE stops delivery; 0x11 for a filter with no subscription")
    void unsubscribe() throws Exception {
        Mqtt5BlockingClient sub = broker.connectedV5("unsub-sub");
        Mqtt5BlockingClient pub = broker.connectedV5("unsub-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("unsub/+").qos(MqttQos.AT_LEAST_ONCE).send();
            sub.subscribeWith().topicFilter("unsub/keep").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5UnsubAck ack = sub.unsubscribeWith().topicFilter("unsub/+").addTopicFilter("unsub/never").send();
            assertEquals(List.of(Mqtt5UnsubAckReasonCode.SUCCESS, Mqtt5UnsubAckReasonCode.NO_SUBSCRIPTIONS_EXISTED),
                    ack.getReasonCodes(), "[MQTT-3.11.3-1] one code per filter, in order");
            pub.publishWith().topic("unsub/gone").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            pub.publishWith().topic("unsub/keep").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send();
            assertArrayEquals(new byte[] {2}, Received.next(in).getPayloadAsBytes(),
                    "the removed filter matched the first message; only the remaining one delivers");
            assertTrue(Received.nothingWithin(in, 500));
        }
        sub.disconnect();
        pub.disconnect();
    }
}
