package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three nodes, each the real jar in its own JVM, acting as one broker: messages cross nodes in
 * order, retained messages and sessions are shared, one client ID has one connection cluster-wide,
 * and a shared group spans nodes.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterIT {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path workDir;

    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.start(workDir, 3, Map.of());
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    static Mqtt5BlockingClient client(int node, String id) {
        Mqtt5BlockingClient c = Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1")
                .serverPort(cluster.port(node)).buildBlocking();
        c.connect();
        return c;
    }

    /** Collects what a client receives, as text. */
    static List<String> collect(Mqtt5BlockingClient c) {
        List<String> got = new CopyOnWriteArrayList<>();
        c.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> got.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
        return got;
    }

    /**
     * Subscriptions reach the other nodes through Kafka a moment after SUBACK: publishes a probe
     * from {@code publisher} until every one of {@code inboxes} has seen a probe.
     */
    static void awaitRoutes(Mqtt5BlockingClient publisher, String topic, List<List<String>> inboxes) {
        Await.until(WAIT, "subscriptions to reach the publisher's node", () -> {
            publisher.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE)
                    .payload("probe".getBytes(StandardCharsets.UTF_8)).send();
            return inboxes.stream().allMatch(i -> i.contains("probe"));
        });
    }

    static List<String> withoutProbes(List<String> got) {
        return got.stream().filter(s -> !s.equals("probe")).toList();
    }

    @Test
    @Order(1)
    void aMessagePublishedOnOneNodeReachesSubscribersOnTheOthersInOrderAtEveryQos() {
        Mqtt5BlockingClient sub2 = client(2, "order-sub-2");
        Mqtt5BlockingClient sub3 = client(3, "order-sub-3");
        List<String> got2 = collect(sub2);
        List<String> got3 = collect(sub3);
        sub2.subscribeWith().topicFilter("order/#").qos(MqttQos.EXACTLY_ONCE).send();
        sub3.subscribeWith().topicFilter("order/#").qos(MqttQos.EXACTLY_ONCE).send();
        Mqtt5BlockingClient pub = client(1, "order-pub");
        awaitRoutes(pub, "order/probe", List.of(got2, got3));

        List<String> expected = new ArrayList<>();
        for (MqttQos qos : MqttQos.values()) {
            for (int i = 0; i < 100; i++) {
                String payload = qos.getCode() + "-" + i;
                expected.add(payload);
                pub.publishWith().topic("order/" + qos.getCode()).qos(qos)
                        .payload(payload.getBytes(StandardCharsets.UTF_8)).send();
            }
        }
        Await.until(WAIT, "all messages on node 2 and 3",
                () -> withoutProbes(got2).size() >= expected.size() && withoutProbes(got3).size() >= expected.size());
        // [MQTT-4.6.0-5] ordered per topic; one publisher, so here in publish order per QoS.
        for (int qos = 0; qos <= 2; qos++) {
            String prefix = qos + "-";
            List<String> want = expected.stream().filter(s -> s.startsWith(prefix)).toList();
            assertEquals(want, withoutProbes(got2).stream().filter(s -> s.startsWith(prefix)).toList(), "node 2, QoS " + qos);
            assertEquals(want, withoutProbes(got3).stream().filter(s -> s.startsWith(prefix)).toList(), "node 3, QoS " + qos);
        }
        pub.disconnect();
        sub2.disconnect();
        sub3.disconnect();
    }

    @Test
    @Order(2)
    void aRetainedMessageSetThroughOneNodeIsSentOnSubscribeAtAnotherAlsoAfterItRestarts() throws Exception {
        Mqtt5BlockingClient pub = client(1, "retain-pub");
        pub.publishWith().topic("retained/lamp").qos(MqttQos.AT_LEAST_ONCE).retain(true)
                .payload("on".getBytes(StandardCharsets.UTF_8)).send();
        pub.disconnect();

        assertEquals("on", retainedAt(3, "retained/lamp"));
        cluster.restart(3);
        assertEquals("on", retainedAt(3, "retained/lamp"), "node 3 rebuilt the retained index after its restart");
    }

    /** Subscribes at {@code node} until the retained message of {@code topic} arrives (it propagates). */
    private static String retainedAt(int node, String topic) {
        String[] found = new String[1];
        Await.until(WAIT, "retained message of " + topic + " at node " + node, () -> {
            Mqtt5BlockingClient sub = client(node, "retain-sub-" + node);
            try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
                sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
                java.util.Optional<com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish> p;
                try {
                    p = publishes.receive(2, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
                // [MQTT-3.3.1-8] sent with RETAIN set on subscribe. A copy without it is the PUBLISH
                // itself, routed live to a subscription made before this node's index had it: try again.
                if (p.isPresent() && p.get().isRetain()) {
                    found[0] = new String(p.get().getPayloadAsBytes(), StandardCharsets.UTF_8);
                }
            } finally {
                sub.disconnect();
            }
            return found[0] != null;
        });
        return found[0];
    }

    @Test
    @Order(3)
    void theSameClientIdConnectingToTwoNodesAtOnceEndsWithExactlyOneConnection() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 50; round++) {
                String id = "race-" + round;
                try (RawMqtt a = RawMqtt.connect(cluster.port(1)); RawMqtt b = RawMqtt.connect(cluster.port(2))) {
                    Future<byte[]> fa = pool.submit(() -> {
                        a.send(RawMqtt.connectV5(id));
                        return a.read();
                    });
                    Future<byte[]> fb = pool.submit(() -> {
                        b.send(RawMqtt.connectV5(id));
                        return b.read();
                    });
                    byte[] connackA = fa.get();
                    byte[] connackB = fb.get();
                    assertEquals(0x20, connackA[0] & 0xFF, "CONNACK on node 1");
                    assertEquals(0x20, connackB[0] & 0xFF, "CONNACK on node 2");
                    // Both were accepted in turn; the earlier one is then taken over [MQTT-3.1.4-3].
                    RawMqtt loser = null;
                    byte[] disconnect = null;
                    long deadline = System.nanoTime() + WAIT.toNanos();
                    while (loser == null && System.nanoTime() < deadline) {
                        for (RawMqtt c : List.of(a, b)) {
                            byte[] p = c.readWithin(100);
                            if (p != RawMqtt.NOTHING) {
                                loser = c;
                                disconnect = p;
                                break;
                            }
                        }
                    }
                    assertTrue(loser != null, "round " + round + ": neither connection was taken over");
                    RawMqtt winner = loser == a ? b : a;
                    assertTrue(disconnect != null, "round " + round + ": closed without DISCONNECT");
                    assertEquals(0xE0, disconnect[0] & 0xFF, "round " + round + ": DISCONNECT");
                    assertEquals(0x8E, disconnect[2] & 0xFF, "round " + round + ": session taken over");
                    assertTrue(loser.closedByBroker(), "round " + round + ": the loser's connection closes");
                    winner.send(new byte[] {(byte) 0xC0, 0}); // PINGREQ
                    byte[] pong = winner.read();
                    assertTrue(pong != null && (pong[0] & 0xFF) == 0xD0, "round " + round + ": the winner stays connected");
                    winner.send(new byte[] {(byte) 0xE0, 0});
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @Order(4)
    void aPersistentSessionMovesToAnotherNodeWithItsSubscriptions() {
        Mqtt5BlockingClient first = Mqtt5Client.builder().identifier("wanderer").serverHost("127.0.0.1")
                .serverPort(cluster.port(2)).buildBlocking();
        Mqtt5ConnAck ack = first.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        assertFalse(ack.isSessionPresent());
        first.subscribeWith().topicFilter("wander/#").qos(MqttQos.AT_LEAST_ONCE).send();
        first.disconnect();

        Mqtt5BlockingClient again = Mqtt5Client.builder().identifier("wanderer").serverHost("127.0.0.1")
                .serverPort(cluster.port(3)).buildBlocking();
        List<String> got = collect(again);
        ack = again.connectWith().cleanStart(false).sessionExpiryInterval(300).send();
        assertTrue(ack.isSessionPresent(), "[MQTT-3.2.2-2] the session continues on another node");
        Mqtt5BlockingClient pub = client(1, "wander-pub");
        awaitRoutes(pub, "wander/probe", List.of(got));
        pub.publishWith().topic("wander/x").qos(MqttQos.AT_LEAST_ONCE).payload("hello".getBytes(StandardCharsets.UTF_8)).send();
        Await.until(WAIT, "message through the moved subscription", () -> got.contains("hello"));
        again.disconnectWith().sessionExpiryInterval(0).send();
        pub.disconnect();
    }

    @Test
    @Order(5)
    void aSharedGroupWithMembersOnTwoNodesGetsEveryMessageExactlyOnce() {
        Mqtt5BlockingClient m1 = client(1, "share-1");
        Mqtt5BlockingClient m3 = client(3, "share-3");
        List<String> got1 = collect(m1);
        List<String> got3 = collect(m3);
        m1.subscribeWith().topicFilter("$share/workers/jobs/#").qos(MqttQos.AT_LEAST_ONCE).send();
        m3.subscribeWith().topicFilter("$share/workers/jobs/#").qos(MqttQos.AT_LEAST_ONCE).send();
        Mqtt5BlockingClient pub = client(2, "share-pub");
        // Both members are known to the publisher's routing node once each has had a probe.
        awaitRoutes(pub, "jobs/probe", List.of(got1, got3));
        got1.clear();
        got3.clear();

        Set<String> expected = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            String payload = "job-" + i;
            expected.add(payload);
            pub.publishWith().topic("jobs/" + (i % 7)).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(payload.getBytes(StandardCharsets.UTF_8)).send();
        }
        Await.until(WAIT, "every job delivered", () -> withoutProbes(got1).size() + withoutProbes(got3).size() >= 300);
        List<String> all = new ArrayList<>(withoutProbes(got1));
        all.addAll(withoutProbes(got3));
        assertEquals(expected, new HashSet<>(all), "every message reached the group");
        assertEquals(300, all.size(), "[MQTT-4.8.2] each message to exactly one member: " + duplicates(all));
        assertFalse(withoutProbes(got1).isEmpty(), "the member on node 1 got a share");
        assertFalse(withoutProbes(got3).isEmpty(), "the member on node 3 got a share");
        m1.disconnect();
        m3.disconnect();
        pub.disconnect();
    }

    @Test
    @Order(6)
    void aNodeStartedLaterJoinsWithoutChangesToTheOthersAndLeavesGracefully() throws Exception {
        int added = cluster.add(Map.of("CLUSTER_SHUTDOWN_SERVER_REFERENCE", "lb.example:1883"));
        Mqtt5BlockingClient sub = client(added, "newcomer-sub");
        List<String> got = collect(sub);
        sub.subscribeWith().topicFilter("join/#").qos(MqttQos.AT_LEAST_ONCE).send();
        Mqtt5BlockingClient pub = client(1, "join-pub");
        awaitRoutes(pub, "join/probe", List.of(got));

        // One session that ends with its connection, one that outlives it.
        try (RawMqtt brief = RawMqtt.connect(cluster.port(added));
             RawMqtt lasting = RawMqtt.connect(cluster.port(added))) {
            brief.send(RawMqtt.connectV5("leaver-brief"));
            assertEquals(0x20, brief.read()[0] & 0xFF);
            lasting.send(RawMqtt.connect(5, true, 60, "leaver-lasting", "05 11 0000012C")); // expiry 300 s
            assertEquals(0x20, lasting.read()[0] & 0xFF);

            assertEquals(143, cluster.stop(added));
            for (RawMqtt c : List.of(brief, lasting)) {
                byte[] disconnect = c.read();
                assertEquals(0xE0, disconnect[0] & 0xFF, "[MQTT-3.14.2] DISCONNECT before the node goes");
                assertEquals(0x9C, disconnect[2] & 0xFF, "use another server, as configured");
                assertTrue(new String(disconnect, StandardCharsets.UTF_8).contains("lb.example:1883"),
                        "with the configured Server Reference");
                assertTrue(c.closedByBroker());
            }
        }
        Await.until(WAIT, "the client on the stopped node to see it go", () -> !sub.getState().isConnected());

        // No stale session: the brief one is gone, the lasting one continues on another node.
        Mqtt5BlockingClient brief = Mqtt5Client.builder().identifier("leaver-brief").serverHost("127.0.0.1")
                .serverPort(cluster.port(1)).buildBlocking();
        assertFalse(brief.connectWith().cleanStart(false).send().isSessionPresent(), "the ended session is gone");
        brief.disconnect();
        Mqtt5BlockingClient lasting = Mqtt5Client.builder().identifier("leaver-lasting").serverHost("127.0.0.1")
                .serverPort(cluster.port(3)).buildBlocking();
        assertTrue(lasting.connectWith().cleanStart(false).sessionExpiryInterval(300).send().isSessionPresent(),
                "the persistent session continues elsewhere");
        lasting.disconnectWith().sessionExpiryInterval(0).send();

        // The publish partitions the node routed were handed over: messages still flow.
        Mqtt5BlockingClient after = client(3, "after-leave-sub");
        List<String> afterGot = collect(after);
        after.subscribeWith().topicFilter("join/#").qos(MqttQos.AT_LEAST_ONCE).send();
        awaitRoutes(pub, "join/probe", List.of(afterGot));
        pub.disconnect();
        after.disconnect();
    }

    static List<String> duplicates(List<String> all) {
        List<String> dups = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (String s : all) {
            if (!seen.add(s)) {
                dups.add(s);
            }
        }
        Collections.sort(dups);
        return dups;
    }

}
