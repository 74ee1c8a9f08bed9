package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.Pipelined;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.embedded.EmbeddedRedisServer;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Persistent DEVICE sessions keep receiving while offline, through their queues in Redis: on any
 * node they come back to, across a restart of every node, within the configured limits, and with
 * Redis restarted underneath. The cluster has a Redis of its own so the test can restart it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DeviceQueueIT {

    private static final Duration WAIT = Duration.ofSeconds(120);

    @TempDir
    static Path workDir;

    private static EmbeddedRedisServer redis;
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        redis = new EmbeddedRedisServer(workDir.resolve("redis"), "127.0.0.1", FreePorts.next());
        redis.start();
        cluster = TestCluster.start(workDir.resolve("nodes"), 2, Map.of(
                "REDIS_URL", redis.url(),
                "DEVICE_QUEUE_LIMIT", "600",
                "DEVICE_QUEUE_TTL", "1h",
                // Two nodes, Kafka, Redis and thousands of QoS 1 messages on two cores: room for the heartbeats.
                "CLUSTER_NODE_TIMEOUT", "10s"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        if (redis != null) {
            redis.stop();
        }
    }

    private static Mqtt5BlockingClient device(String id, int node) {
        return Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1").serverPort(cluster.port(node))
                .buildBlocking();
    }

    /** Connects persistent devices on {@code node}, subscribes each to its topic, and leaves. */
    private static void subscribeAndLeave(String prefix, int count, int node) {
        for (int i = 0; i < count; i++) {
            Mqtt5BlockingClient d = device(prefix + i, node);
            d.connectWith().cleanStart(true).sessionExpiryInterval(3600).send();
            d.subscribeWith().topicFilter("dq/" + prefix + i).qos(MqttQos.AT_LEAST_ONCE).send();
            d.disconnect();
        }
    }

    private static void publish(String prefix, int count, int messages, int node) {
        Mqtt5BlockingClient pub = device(prefix + "pub", node);
        pub.connect();
        List<String> topics = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        for (int m = 0; m < messages; m++) {
            for (int i = 0; i < count; i++) {
                topics.add("dq/" + prefix + i);
                payloads.add(Integer.toString(m).getBytes(StandardCharsets.UTF_8));
            }
        }
        Pipelined.publish(pub, topics, payloads);
        pub.disconnect();
    }

    /**
     * Connects with the session kept. A node too busy to confirm its heartbeats in time fences
     * itself for a moment and answers CONNECT with 0x88 Server unavailable, which a device meets
     * by connecting again, as this does; what is asserted is what the queue then delivers.
     */
    private static Mqtt5ConnAck resume(Mqtt5BlockingClient d, String id) {
        Mqtt5ConnAck[] ack = new Mqtt5ConnAck[1];
        Await.until(WAIT, id + " connected", () -> {
            try {
                ack[0] = d.connectWith().cleanStart(false).sessionExpiryInterval(3600).send();
                return true;
            } catch (com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException e) {
                if (e.getMqttMessage().getReasonCode()
                        != com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode.SERVER_UNAVAILABLE) {
                    throw e;
                }
                System.err.println(id + ": CONNACK 0x88, connecting again: " + e.getMqttMessage().getReasonString());
                return false;
            }
        });
        return ack[0];
    }

    /** Reconnects each device on {@code node} and collects what it gets until it has {@code expect}. */
    private static List<List<Integer>> collect(String prefix, int count, int node, int expect) {
        List<List<Integer>> all = new ArrayList<>();
        List<Mqtt5BlockingClient> clients = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Mqtt5BlockingClient d = device(prefix + i, node);
            List<Integer> got = new CopyOnWriteArrayList<>();
            d.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                    p -> got.add(Integer.parseInt(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8))));
            Mqtt5ConnAck ack = resume(d, prefix + i);
            assertTrue(ack.isSessionPresent(), prefix + i + " finds its session");
            all.add(got);
            clients.add(d);
        }
        try {
            Await.until(WAIT, "every device's queue", () -> all.stream().allMatch(g -> g.size() >= expect));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; short: " + shortOnes(prefix, all, expect), e);
        }
        clients.forEach(c -> c.disconnectWith().sessionExpiryInterval(0).send());
        return all;
    }

    /**
     * For a failure: each device that got fewer than {@code expect}, with how many, its first and
     * last message and the gaps in between (a gap is a lost message, none a delivery that stalled).
     */
    private static String shortOnes(String prefix, List<List<Integer>> all, int expect) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < all.size(); i++) {
            List<Integer> got = List.copyOf(all.get(i));
            if (got.size() < expect) {
                b.append(prefix).append(i).append(": ").append(got.size());
                if (!got.isEmpty()) {
                    int first = got.get(0);
                    int last = got.get(got.size() - 1);
                    Set<Integer> seen = new HashSet<>(got);
                    List<Integer> gaps = new ArrayList<>();
                    for (int m = first; m <= last && gaps.size() < 10; m++) {
                        if (!seen.contains(m)) {
                            gaps.add(m);
                        }
                    }
                    b.append(" from ").append(first).append(" to ").append(last).append(", missing ").append(gaps);
                }
                b.append("; ");
            }
        }
        return b.toString();
    }

    private static List<Integer> range(int from, int to) {
        List<Integer> r = new ArrayList<>();
        for (int i = from; i < to; i++) {
            r.add(i);
        }
        return r;
    }

    @Test
    @Order(1)
    void offlineDevicesGetTheirQueueOnAnotherNodeInOrderWithoutDuplicates() {
        subscribeAndLeave("a", 20, 1);
        // The subscriptions reach the routing nodes a moment after SUBACK; wait until both know them.
        Await.until(WAIT, "subscriptions on both nodes", () -> metric(1, "fleetmq_subscriptions") >= 20
                && metric(2, "fleetmq_subscriptions") >= 20);
        publish("a", 20, 500, 2);
        List<List<Integer>> got = collect("a", 20, 2, 500);
        for (int i = 0; i < 20; i++) {
            assertEquals(range(0, 500), got.get(i), "device a" + i + ": all 500, in order, once");
        }
    }

    @Test
    @Order(2)
    void queuesSurviveARestartOfEveryNode() throws Exception {
        subscribeAndLeave("b", 5, 2);
        Await.until(WAIT, "subscriptions on both nodes", () -> metric(1, "fleetmq_subscriptions") >= 5
                && metric(2, "fleetmq_subscriptions") >= 5);
        publish("b", 5, 100, 1);
        cluster.restart(1);
        cluster.restart(2);
        List<List<Integer>> got = collect("b", 5, 1, 100);
        for (int i = 0; i < 5; i++) {
            assertEquals(range(0, 100), got.get(i), "device b" + i);
        }
    }

    @Test
    @Order(3)
    void beyondTheQueueLimitTheOldestAreDroppedAndCounted() {
        subscribeAndLeave("c", 1, 1);
        Await.until(WAIT, "subscription on both nodes", () -> metric(2, "fleetmq_subscriptions") >= 1);
        double before = metric(1, "fleetmq_messages_dropped_total{reason=\"session_queue_full\"}")
                + metric(2, "fleetmq_messages_dropped_total{reason=\"session_queue_full\"}");
        publish("c", 1, 700, 2);
        // Every message is in the queue (the oldest 100 pushed out) before the device comes back: a
        // PUBACK means stored in Kafka, not yet queued in Redis, and a device reading meanwhile would
        // keep the queue below its limit.
        Await.until(WAIT, "100 drops counted", () -> metric(1, "fleetmq_messages_dropped_total{reason=\"session_queue_full\"}")
                + metric(2, "fleetmq_messages_dropped_total{reason=\"session_queue_full\"}") - before >= 100);
        List<List<Integer>> got = collect("c", 1, 2, 600);
        assertEquals(range(100, 700), got.get(0), "the newest 600 (DEVICE_QUEUE_LIMIT) stay");
    }

    @Test
    @Order(4)
    void withRedisRestartedDeliveryPausesAndResumesAndNothingAcknowledgedIsLost() throws Exception {
        subscribeAndLeave("d", 3, 1);
        Await.until(WAIT, "subscriptions on both nodes", () -> metric(2, "fleetmq_subscriptions") >= 3);
        publish("d", 3, 50, 2);
        redis.stop();
        // Published, and acknowledged (stored in Kafka), while Redis is down.
        Mqtt5BlockingClient pub = device("d-pub2", 2);
        pub.connect();
        for (int m = 50; m < 100; m++) {
            for (int i = 0; i < 3; i++) {
                pub.publishWith().topic("dq/d" + i).qos(MqttQos.AT_LEAST_ONCE)
                        .payload(Integer.toString(m).getBytes(StandardCharsets.UTF_8)).send();
            }
        }
        pub.disconnect();
        redis.start();
        List<List<Integer>> got = collect("d", 3, 1, 100);
        for (int i = 0; i < 3; i++) {
            assertEquals(range(0, 100), got.get(i), "device d" + i);
        }
    }

    @Test
    @Order(5)
    void aSessionResumedOnAnotherNodeWithExpiryZeroGetsItsQueueAndThenEnds() {
        subscribeAndLeave("e", 1, 1);
        Await.until(WAIT, "subscription on both nodes", () -> metric(2, "fleetmq_subscriptions") >= 1
                && metric(1, "fleetmq_subscriptions") >= 1);
        publish("e", 1, 50, 1);
        Mqtt5BlockingClient d = device("e0", 2);
        List<Integer> got = new CopyOnWriteArrayList<>();
        d.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> got.add(Integer.parseInt(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8))));
        // No Session Expiry Interval: 0. The session is present and its queue still its own.
        assertTrue(d.connectWith().cleanStart(false).send().isSessionPresent(), "e0 finds its session");
        Await.until(WAIT, "the queue", () -> got.size() >= 50);
        assertEquals(range(0, 50), got, "all 50, in order, once");
        d.disconnect();
        Mqtt5BlockingClient again = device("e0", 1);
        assertFalse(again.connectWith().cleanStart(false).send().isSessionPresent(), "expiry 0 ended the session");
        again.disconnect();
    }

    private static double metric(int node, String name) {
        String body = Http.get(cluster.node(node).httpPort(), "/metrics").body();
        double sum = 0;
        for (String line : body.split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{") && !name.contains("{")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            } else if (name.contains("{") && line.startsWith(name.substring(0, name.indexOf('{')) + "{")
                    && line.contains(name.substring(name.indexOf('{') + 1, name.length() - 1))) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
