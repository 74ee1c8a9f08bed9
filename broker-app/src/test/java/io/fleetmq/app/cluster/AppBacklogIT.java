package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.Pipelined;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Persistent APPLICATION sessions (client IDs starting with {@code app-} here) have their backlog
 * in a Kafka topic of their own: it survives their absence and a change of node, what they did not
 * acknowledge comes again with DUP, and a stalled one never holds devices up.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AppBacklogIT {

    private static final Duration WAIT = Duration.ofSeconds(120);

    @TempDir
    static Path workDir;

    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.start(workDir, 2, Map.of("APPLICATION_CLIENT_ID_PATTERN", "app-.*"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Mqtt5BlockingClient client(String id, int node) {
        return Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1").serverPort(cluster.port(node))
                .buildBlocking();
    }

    private static void publish(String topic, int from, int to, int node) {
        Mqtt5BlockingClient pub = client("pub-" + topic.replace('/', '-') + "-" + from, node);
        pub.connect();
        List<String> topics = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        for (int m = from; m < to; m++) {
            topics.add(topic);
            payloads.add(Integer.toString(m).getBytes(StandardCharsets.UTF_8));
        }
        Pipelined.publish(pub, topics, payloads);
        pub.disconnect();
    }

    /** A persistent subscriber that subscribes, then leaves; its session stays. */
    private static void subscribeAndLeave(String id, String filter, int node) {
        Mqtt5BlockingClient c = client(id, node);
        c.connectWith().cleanStart(true).sessionExpiryInterval(3600).send();
        c.subscribeWith().topicFilter(filter).qos(MqttQos.AT_LEAST_ONCE).send();
        c.disconnect();
    }

    /** Waits until a message published on {@code node} to {@code topic} reaches the other node's subscriber. */
    private static void awaitRoute(String watcherFilter, String topic, int watcherNode, int publisherNode) {
        Mqtt5BlockingClient watcher = client("watch-" + topic.replace('/', '-'), watcherNode);
        watcher.connect();
        List<String> got = new CopyOnWriteArrayList<>();
        watcher.toAsync().publishes(MqttGlobalPublishFilter.ALL, p -> got.add(p.getTopic().toString()));
        watcher.subscribeWith().topicFilter(watcherFilter).qos(MqttQos.AT_LEAST_ONCE).send();
        Mqtt5BlockingClient probe = client("probe-" + topic.replace('/', '-'), publisherNode);
        probe.connect();
        Await.until(WAIT, "routes to node " + watcherNode, () -> {
            probe.publishWith().topic(topic + "/probe").qos(MqttQos.AT_MOST_ONCE).send();
            return !got.isEmpty();
        });
        probe.disconnect();
        watcher.disconnect();
    }

    /** Reconnects {@code count} readers on {@code node} and waits until each has {@code expect} messages. */
    private static List<List<Integer>> readBack(String prefix, int count, int node, int expect) {
        List<List<Integer>> all = new ArrayList<>();
        List<Mqtt5BlockingClient> readers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Mqtt5BlockingClient r = client(prefix + i, node);
            List<Integer> got = new CopyOnWriteArrayList<>();
            r.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                    p -> got.add(Integer.parseInt(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8))));
            assertTrue(r.connectWith().cleanStart(false).sessionExpiryInterval(3600).send().isSessionPresent(),
                    prefix + i + " finds its session");
            all.add(got);
            readers.add(r);
        }
        Await.until(WAIT, "every backlog", () -> all.stream().allMatch(g -> g.size() >= expect));
        readers.forEach(r -> r.disconnectWith().sessionExpiryInterval(0).send());
        return all;
    }

    private static List<Integer> range(int to) {
        List<Integer> expected = new ArrayList<>();
        for (int m = 0; m < to; m++) {
            expected.add(m);
        }
        return expected;
    }

    @Test
    @Order(1)
    void offlineApplicationsGetTheirWholeBacklogInOrderOnAnotherNode() {
        for (int i = 0; i < 20; i++) {
            subscribeAndLeave("app-reader-" + i, "backlog/" + i, 1);
        }
        awaitRoute("backlog/#", "backlog/route", 1, 2);
        for (int i = 0; i < 20; i++) {
            publish("backlog/" + i, 0, 500, 2);
        }
        List<List<Integer>> all = readBack("app-reader-", 20, 2, 500);
        for (int i = 0; i < 20; i++) {
            assertEquals(range(500), all.get(i), "app-reader-" + i + ": all 500, in order, once");
        }
    }

    @Test
    @Order(2)
    void whatAKilledApplicationDidNotAcknowledgeComesAgainWithDup() throws Exception {
        subscribeAndLeave("app-crasher", "crash/t", 1);
        awaitRoute("crash/#", "crash/route", 1, 2);
        publish("crash/t", 0, 20, 2);

        List<Integer> acknowledged = new ArrayList<>();
        try (RawMqtt raw = RawMqtt.connect(cluster.port(1))) {
            raw.send(RawMqtt.connect(5, false, 60, "app-crasher", "05 11 00000E10")); // expiry 3600 s
            assertTrue(RawMqtt.parseConnAckV5(raw.readType(2)).sessionPresent());
            for (int n = 0; n < 20; n++) {
                RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
                assertFalse(p.dup(), "first delivery");
                if (n < 10) {
                    raw.send(RawMqtt.ack(0x40, p.packetId()));
                    acknowledged.add(Integer.parseInt(new String(p.payload(), StandardCharsets.UTF_8)));
                }
            }
            // Dies without acknowledging the last ten (the socket just closes).
        }
        assertEquals(10, acknowledged.size());

        try (RawMqtt raw = RawMqtt.connect(cluster.port(2))) {
            raw.send(RawMqtt.connect(5, false, 60, "app-crasher", "05 11 00000E10"));
            assertTrue(RawMqtt.parseConnAckV5(raw.readType(2)).sessionPresent(), "the session continues elsewhere");
            List<Integer> again = new ArrayList<>();
            for (int n = 0; n < 10; n++) {
                RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
                assertTrue(p.dup(), "[MQTT-3.3.1-1] a redelivery carries DUP");
                again.add(Integer.parseInt(new String(p.payload(), StandardCharsets.UTF_8)));
                raw.send(RawMqtt.ack(0x40, p.packetId()));
            }
            assertEquals(List.of(10, 11, 12, 13, 14, 15, 16, 17, 18, 19), again, "the unacknowledged ones, in order");
            raw.socketTimeout(1_500);
            assertTrue(raw.nothingWithin(), "nothing acknowledged comes again");
        }
    }

    @Test
    @Order(3)
    void aStalledApplicationWithALargeBacklogDoesNotHoldDevicesUp() throws Exception {
        // The application subscribes and then never acknowledges: its window fills at once.
        try (RawMqtt stalled = RawMqtt.connect(cluster.port(1))) {
            stalled.send(RawMqtt.connect(5, true, 600, "app-stalled", "08 11 00000E10 21 000A")); // expiry, Receive Maximum 10
            stalled.readType(2);
            stalled.send(RawMqtt.subscribeV5(1, "iso/#", 1));
            stalled.readType(9);

            Mqtt5BlockingClient device = client("device-iso", 1);
            device.connect();
            List<String> got = new CopyOnWriteArrayList<>();
            device.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                    p -> got.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
            device.subscribeWith().topicFilter("iso/#").qos(MqttQos.AT_LEAST_ONCE).send();
            awaitRoute("iso/#", "iso/route", 1, 2);

            publish("iso/x", 0, 3000, 2);
            Await.until(WAIT, "the device to get all 3000 while the application is stalled",
                    () -> got.stream().filter(s -> !s.isEmpty()).count() >= 3000);
            // The application still has received at most its window.
            int received = 0;
            for (byte[] p = stalled.readWithin(500); p != RawMqtt.NOTHING && p != null; p = stalled.readWithin(500)) {
                if ((p[0] & 0xF0) == 0x30 && RawMqtt.parsePublishV5(p).qos() > 0) {
                    received++;
                }
            }
            assertTrue(received <= 10, "the stalled application was sent only its window, got " + received);
            device.disconnect();
        }
    }

    /** A persistent APPLICATION member of {@code $share/<group>/<filter>}: connects, subscribes, records payloads. */
    private static Mqtt5BlockingClient sharedMember(String id, int node, String sharedFilter, List<String> got,
            boolean subscribe) {
        Mqtt5BlockingClient c = client(id, node);
        c.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> got.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
        c.connectWith().cleanStart(subscribe).sessionExpiryInterval(3600).send();
        if (subscribe) {
            c.subscribeWith().topicFilter(sharedFilter).qos(MqttQos.AT_LEAST_ONCE).send();
        }
        return c;
    }

    /** Publishes {@code count} QoS 1 messages spread over 16 topics, payload {@code <phase>-<n>}. */
    private static List<String> publishPhase(String phase, int count, int node) {
        Mqtt5BlockingClient pub = client("pub-shared-" + phase, node);
        pub.connect();
        List<String> sent = new ArrayList<>();
        List<String> topics = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        for (int m = 0; m < count; m++) {
            String payload = phase + "-" + m;
            topics.add("shared/t" + (m % 16));
            payloads.add(payload.getBytes(StandardCharsets.UTF_8));
            sent.add(payload);
        }
        Pipelined.publish(pub, topics, payloads);
        pub.disconnect();
        return sent;
    }

    /** The phase messages among what a member got: not the probes. */
    private static List<String> phases(List<String> got) {
        return got.stream().filter(p -> p.contains("-")).toList();
    }

    private static int count(List<String> one, List<String> two) {
        return phases(one).size() + phases(two).size();
    }

    /**
     * Publishes probes to every topic until both members have got one: then the consumer group has
     * given each of them some of the partitions.
     */
    private static void awaitBothReading(List<String> one, List<String> two) {
        Mqtt5BlockingClient probe = client("probe-shared", 1);
        probe.connect();
        one.removeIf("probe"::equals);
        two.removeIf("probe"::equals);
        int[] n = {0};
        Await.until(WAIT, "both members to read some partitions", () -> {
            probe.publishWith().topic("shared/t" + (n[0]++ % 16)).qos(MqttQos.AT_LEAST_ONCE)
                    .payload("probe".getBytes(StandardCharsets.UTF_8)).send();
            return one.contains("probe") && two.contains("probe");
        });
        probe.disconnect();
    }

    @Test
    @Order(4)
    void aSharedApplicationGroupGetsEveryMessageOnceAlsoWhileAMemberIsAwayAndAfterItReturns() {
        String filter = "$share/workers/shared/#";
        List<String> one = new CopyOnWriteArrayList<>();
        List<String> two = new CopyOnWriteArrayList<>();
        Mqtt5BlockingClient m1 = sharedMember("app-worker-1", 1, filter, one, true);
        Mqtt5BlockingClient m2 = sharedMember("app-worker-2", 2, filter, two, true);
        awaitBothReading(one, two);

        // Both members connected: the group's partitions are split between them.
        List<String> sent = new ArrayList<>(publishPhase("both", 400, 2));
        Await.until(WAIT, "the first 400", () -> count(one, two) >= sent.size());
        assertTrue(!phases(one).isEmpty() && !phases(two).isEmpty(),
                "both members read: " + phases(one).size() + " / " + phases(two).size());

        // One member away: its share accumulates for the other, which now reads every partition.
        m2.disconnect();
        int twoBefore = phases(two).size();
        sent.addAll(publishPhase("one-away", 400, 2));
        Await.until(WAIT, "the member still connected to get the rest", () -> count(one, two) >= sent.size());
        assertEquals(twoBefore, phases(two).size(), "nothing for the member that is away");

        // It returns: the partitions are split again.
        int twoAway = phases(two).size();
        m2 = sharedMember("app-worker-2", 2, filter, two, false);
        awaitBothReading(one, two);
        sent.addAll(publishPhase("returned", 400, 1));
        Await.until(WAIT, "the third 400", () -> count(one, two) >= sent.size());
        assertTrue(phases(two).size() > twoAway, "the returning member reads again");

        // Both away: the backlog waits in Kafka and the first member back gets all of it.
        m1.disconnect();
        m2.disconnect();
        sent.addAll(publishPhase("all-away", 400, 2));
        m1 = sharedMember("app-worker-1", 2, filter, one, false);
        Await.until(WAIT, "the backlog of the group", () -> count(one, two) >= sent.size());

        List<String> got = new ArrayList<>(phases(one));
        got.addAll(phases(two));
        got.sort(null);
        List<String> expected = new ArrayList<>(sent);
        expected.sort(null);
        assertEquals(expected, got, "every message, once");
        m1.disconnectWith().sessionExpiryInterval(0).send();
    }

    @Test
    @Order(5)
    void backlogsSurviveARestartOfEveryNode() throws Exception {
        for (int i = 0; i < 5; i++) {
            subscribeAndLeave("app-restart-" + i, "restart/" + i, 2);
        }
        awaitRoute("restart/#", "restart/route", 2, 1);
        for (int i = 0; i < 5; i++) {
            publish("restart/" + i, 0, 100, 1);
        }
        cluster.restart(1);
        cluster.restart(2);
        List<List<Integer>> all = readBack("app-restart-", 5, 1, 100);
        for (int i = 0; i < 5; i++) {
            assertEquals(range(100), all.get(i), "app-restart-" + i + ": all 100, in order, once");
        }
    }

    @Test
    @Order(6)
    void anApplicationResumedOnAnotherNodeWithExpiryZeroGetsItsBacklogAndThenEnds() {
        subscribeAndLeave("app-resume-zero", "resume-zero/t", 1);
        awaitRoute("resume-zero/#", "resume-zero/route", 1, 2);
        publish("resume-zero/t", 0, 50, 2);
        Mqtt5BlockingClient r = client("app-resume-zero", 2);
        List<Integer> got = new CopyOnWriteArrayList<>();
        r.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> got.add(Integer.parseInt(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8))));
        // No Session Expiry Interval: 0. The session is present and its backlog still its own.
        assertTrue(r.connectWith().cleanStart(false).send().isSessionPresent(), "the session is resumed");
        Await.until(WAIT, "the backlog", () -> got.size() >= 50);
        assertEquals(range(50), got, "all 50, in order, once");
        r.disconnect();
        // The DISCONNECT reaches node 2 and its session event reaches the connect sequence some time after
        // the client has closed: a CONNECT sent at once may still take the session over (and continue it).
        // Every connection of this session has expiry 0, so the next one to end must end it.
        Await.until(WAIT, "expiry 0 to end the session", () -> {
            Mqtt5BlockingClient again = client("app-resume-zero", 1);
            boolean present = again.connectWith().cleanStart(false).send().isSessionPresent();
            again.disconnect();
            return !present;
        });
    }
}
