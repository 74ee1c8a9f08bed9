package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shared subscriptions {@code $share/<group>/<filter>} (4.8.2): each message to one member, spread
 * across the members, a leaving member's share going to those that remain, each member's granted
 * QoS respected.
 */
class SharedSubscriptionTest {

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

    private static int drain(Mqtt5BlockingClient.Mqtt5Publishes in, Set<Integer> seen) throws InterruptedException {
        int n = 0;
        Optional<Mqtt5Publish> m;
        while ((m = in.receive(2, TimeUnit.SECONDS)).isPresent()) {
            assertTrue(seen.add((int) m.get().getPayloadAsBytes()[0]), "duplicate " + m.get());
            n++;
        }
        return n;
    }

    @Test
    @DisplayName("4.8.2 each message goes to exactly one member, spread across the members")
    void aSharedSubscriptionGivesEachMessageToExactlyOneMember() throws Exception {
        Mqtt5BlockingClient a = broker.connectedV5("share-a");
        Mqtt5BlockingClient b = broker.connectedV5("share-b");
        Set<Integer> seen = new HashSet<>();
        int total = 20;
        try (Mqtt5BlockingClient.Mqtt5Publishes inA = a.publishes(MqttGlobalPublishFilter.ALL);
             Mqtt5BlockingClient.Mqtt5Publishes inB = b.publishes(MqttGlobalPublishFilter.ALL)) {
            a.subscribeWith().topicFilter("$share/workers/jobs/#").qos(MqttQos.AT_LEAST_ONCE).send();
            b.subscribeWith().topicFilter("$share/workers/jobs/#").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5BlockingClient pub = broker.connectedV5("share-pub");
            for (int i = 0; i < total; i++) {
                pub.publishWith().topic("jobs/" + i).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
            int fromA = drain(inA, seen);
            int fromB = drain(inB, seen);
            assertEquals(total, fromA + fromB, "every message delivered once");
            assertEquals(total, seen.size(), "no message twice");
            assertTrue(fromA > 0 && fromB > 0, "spread across members: " + fromA + "/" + fromB);
            pub.disconnect();
        }
        a.disconnect();
        b.disconnect();
    }

    @Test
    @DisplayName("4.8.2 a member that leaves (its session ends) or goes offline (its session stays): its share goes to the remaining member")
    void aLeavingMembersShareGoesToTheRemainingMembers() throws Exception {
        Mqtt5BlockingClient stays = broker.connectedV5("share-stays");
        Mqtt5BlockingClient pub = broker.connectedV5("share-leave-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = stays.publishes(MqttGlobalPublishFilter.ALL)) {
            stays.subscribeWith().topicFilter("$share/leavers/work/#").qos(MqttQos.AT_LEAST_ONCE).send();
            leaveAfterSubscribing("share-leaves", "00");          // session expiry 0: its subscription ends with it
            leaveAfterSubscribing("share-away", "05 110000012c"); // offline, its session stays for 300 s
            Set<Integer> seen = new HashSet<>();
            int total = 12;
            for (int i = 0; i < total; i++) {
                pub.publishWith().topic("work/" + i).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
            assertEquals(total, drain(in, seen), "the remaining connected member gets every message");
        }
        // The offline member's session got none of them: it resumes with an empty queue.
        Mqtt5BlockingClient away = broker.v5("share-away");
        try (Mqtt5BlockingClient.Mqtt5Publishes awayIn = away.publishes(MqttGlobalPublishFilter.ALL)) {
            assertTrue(away.connectWith().cleanStart(false).sessionExpiryInterval(300).send().isSessionPresent());
            assertTrue(Received.nothingWithin(awayIn, 1_000), "nothing queued for the offline member");
        }
        away.disconnectWith().sessionExpiryInterval(0).send();
        stays.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("4.8.2 with no member connected, a QoS 1 message waits in a persistent DEVICE member's queue and reaches it when it returns")
    void withNoMemberConnectedAPersistentDeviceMembersQueueKeepsTheMessages() throws Exception {
        leaveAfterSubscribing("share-dev-away", "05 110000012c", "$share/devices/queued/#"); // offline, session stays 300 s
        Mqtt5BlockingClient pub = broker.connectedV5("share-dev-pub");
        for (int i = 0; i < 5; i++) {
            pub.publishWith().topic("queued/" + i).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
        }
        pub.disconnect();
        Mqtt5BlockingClient back = broker.v5("share-dev-away");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = back.publishes(MqttGlobalPublishFilter.ALL)) {
            assertTrue(back.connectWith().cleanStart(false).sessionExpiryInterval(300).send().isSessionPresent());
            for (int i = 0; i < 5; i++) {
                Mqtt5Publish p = in.receive(10, TimeUnit.SECONDS).orElseThrow(
                        () -> new AssertionError("a queued message did not arrive"));
                assertEquals("queued/" + p.getPayloadAsBytes()[0], p.getTopic().toString());
                assertEquals(i, p.getPayloadAsBytes()[0], "in order");
            }
        }
        back.disconnectWith().sessionExpiryInterval(0).send();
    }

    private static void leaveAfterSubscribing(String clientId, String connectProperties) throws Exception {
        leaveAfterSubscribing(clientId, connectProperties, "$share/leavers/work/#");
    }

    /**
     * A raw member joins the group and leaves with DISCONNECT; the broker closes the socket only
     * after the session has processed it, so once closed the group knows.
     */
    private static void leaveAfterSubscribing(String clientId, String connectProperties, String filter)
            throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 60, clientId, connectProperties));
            raw.readType(2);
            raw.send(RawMqtt.subscribeV5(1, filter, 1));
            raw.readType(9);
            raw.sendHex("e000");
            assertTrue(raw.closedByBroker());
        }
    }

    @Test
    @DisplayName("[MQTT-4.8.2-3] [MQTT-3.8.4-8] a member gets the message at its own granted QoS")
    void eachMemberGetsItsGrantedQos() throws Exception {
        Mqtt5BlockingClient member = broker.connectedV5("share-qos0");
        Mqtt5BlockingClient pub = broker.connectedV5("share-qos-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = member.publishes(MqttGlobalPublishFilter.ALL)) {
            member.subscribeWith().topicFilter("$share/q/qos/t").qos(MqttQos.AT_MOST_ONCE).send();
            pub.publishWith().topic("qos/t").qos(MqttQos.EXACTLY_ONCE).payload(new byte[] {1}).send();
            assertEquals(MqttQos.AT_MOST_ONCE, Received.next(in).getQos());
        }
        member.disconnect();
        pub.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.8.3-4] No Local on a shared subscription: DISCONNECT 0x82")
    void noLocalOnASharedSubscriptionIsAProtocolError() throws Exception {
        try (RawMqtt raw = broker.rawV5("share-nolocal")) {
            raw.send(RawMqtt.subscribeV5(1, "$share/g/t", 0x04 | 1));
            byte[] disconnect = raw.readType(14);
            assertEquals(0x82, disconnect[2] & 0xFF);
        }
    }

    @Test
    @DisplayName("4.8.2 a shared subscription and a plain one of the same client: one copy for each subscription")
    void sharedAndPlainSubscriptionsOfOneClient() throws Exception {
        Mqtt5BlockingClient c = broker.connectedV5("share-and-plain");
        Mqtt5BlockingClient pub = broker.connectedV5("share-and-plain-pub");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = c.publishes(MqttGlobalPublishFilter.ALL)) {
            c.subscribeWith().topicFilter("$share/g/both/t").qos(MqttQos.AT_LEAST_ONCE).send();
            c.subscribeWith().topicFilter("both/t").qos(MqttQos.AT_LEAST_ONCE).send();
            pub.publishWith().topic("both/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
            Received.next(in);
            Received.next(in);
            assertTrue(Received.nothingWithin(in, 1_000), "two copies, not more");
        }
        c.disconnect();
        pub.disconnect();
    }
}
