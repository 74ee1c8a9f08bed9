package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.RawSubscribers;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import io.fleetmq.testkit.TestServices;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A QoS 1 PUBLISH of exactly the maximum packet size (the default, 1 MiB), retained and not, reaches
 * 2,000 subscribers connected to the other node of a 2-node cluster, 20 of them persistent
 * APPLICATION sessions: Kafka's record limit no longer equals the packet limit, so the PUBLISH is
 * acknowledged, the hand-off to the subscribers' node (a record with all their subscriptions, split
 * below the limit) is stored, each subscriber gets each message once, and the routing consumers
 * are not left re-reading a batch; and the node's direct memory holds each payload once, not once per
 * subscriber.
 */
// Two nodes delivering 4 GB to 2,000 connections take both cores: nothing runs beside it.
@org.junit.jupiter.api.parallel.Isolated
class RecordSizeIT {

    private static final Duration WAIT = Duration.ofMinutes(3);
    private static final int MAX_PACKET_SIZE = 1_048_576;
    private static final int SUBSCRIBERS = 2_000;
    private static final int APPLICATIONS = 20;
    private static final int PUBLISH_PARTITIONS = 6;
    private static final int WAVE = 250;

    @TempDir
    static Path workDir;

    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        // Thousands of connects at once on a busy machine: node timeout and connect timeout with room,
        // and no bound on the connection rate. Client IDs of about 200 bytes make the records large.
        // 128 MiB of direct memory: enough when the 2,000 connections share one copy of each payload,
        // while a copy per connection (up to 2 GB with the subscribers' sockets full) runs out of it.
        cluster = TestCluster.start(workDir, 2, Map.of("APPLICATION_CLIENT_ID_PATTERN", "app-.*",
                "CLUSTER_HEARTBEAT_INTERVAL", "1s", "CLUSTER_NODE_TIMEOUT", "10s", "CLUSTER_CONNECT_TIMEOUT", "60s",
                "MQTT_MAX_CONNECTION_RATE", "1000000", "MQTT_MAX_CLIENT_ID_LENGTH", "1024",
                "JAVA_TOOL_OPTIONS", "-XX:MaxDirectMemorySize=128m"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static double metric(int node, String name) {
        String body = Http.get(cluster.node(node).httpPort(), "/metrics").body();
        double sum = 0;
        for (String line : body.split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    private static double droppedAsDeadLetters(int node) {
        String body = Http.get(cluster.node(node).httpPort(), "/metrics").body();
        double sum = 0;
        for (String line : body.split("\n")) {
            if (line.startsWith("fleetmq_messages_dropped_total{") && line.contains("reason=\"dead_letter\"")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /**
     * A publisher client ID whose {@code publish} partition node 1 routes, so the messages reach
     * the subscribers on node 2 through its downlink topic, the path a record too large stalled.
     */
    private static String publisherRoutedByNode1() throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestServices.shared().kafkaBootstrapServers());
        List<Integer> node1 = new ArrayList<>();
        try (Admin admin = Admin.create(props)) {
            String group = cluster.topicPrefix() + "publish";
            Await.until(WAIT, "both nodes route publish partitions", () -> {
                node1.clear();
                try {
                    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                    int members = 0;
                    for (MemberDescription m : d.members()) {
                        members++;
                        if (m.clientId().contains("node-1")) {
                            m.assignment().topicPartitions().stream().map(TopicPartition::partition).forEach(node1::add);
                        }
                    }
                    return members == 2 && !node1.isEmpty() && node1.size() < PUBLISH_PARTITIONS;
                } catch (Exception e) {
                    return false;
                }
            });
        }
        for (int i = 0; ; i++) {
            String id = "big-publisher-" + i;
            // Kafka's partitioner for a keyed record.
            int partition = Utils.toPositive(Utils.murmur2(id.getBytes(StandardCharsets.UTF_8))) % PUBLISH_PARTITIONS;
            if (node1.contains(partition)) {
                return id;
            }
        }
    }

    /** A QoS 1 PUBLISH that is, as a whole packet, exactly {@code MAX_PACKET_SIZE} bytes. */
    private static byte[] maximumPublish(String topic, boolean retain, int packetId) {
        // Fixed header 1 byte + 3 remaining-length bytes; topic 2 + n; packet ID 2; properties length 1.
        int payload = MAX_PACKET_SIZE - 4 - (2 + topic.length()) - 2 - 1;
        byte[] bytes = new byte[payload];
        new Random(packetId).nextBytes(bytes);
        byte[] packet = RawMqtt.publishV5(topic, 1, packetId, bytes);
        assertEquals(MAX_PACKET_SIZE, packet.length, "the whole packet is the maximum packet size");
        if (retain) {
            packet[0] |= 1;
        }
        return packet;
    }

    private static int payloadOf(String topic) {
        return MAX_PACKET_SIZE - 4 - (2 + topic.length()) - 2 - 1;
    }

    /** Waits until every subscriber satisfies {@code condition}; on timeout says how many do, and what the nodes logged. */
    private static void awaitAll(RawSubscribers subs, String what,
            java.util.function.Predicate<RawSubscribers.Connection> condition) {
        try {
            Await.until(WAIT, "every subscriber " + what, () -> subs.connections().stream().allMatch(condition));
        } catch (AssertionError e) {
            List<RawSubscribers.Connection> not = subs.connections().stream().filter(condition.negate()).toList();
            RawSubscribers.Connection first = not.get(0);
            throw new AssertionError(not.size() + " of " + subs.connections().size() + " subscribers not " + what
                    + "; e.g. " + first.clientId() + " (CONNACK " + first.connAckReason() + ", SUBACK "
                    + first.subAckReason() + ", closed " + first.closed() + ": " + first.closeCause() + "); reader failure: "
                    + subs.failure() + "\nhow the others ended: " + not.stream().map(RawSubscribers.Connection::closeCause)
                            .collect(java.util.stream.Collectors.groupingBy(c -> String.valueOf(c),
                                    java.util.stream.Collectors.counting()))
                    + "\nnode-1:\n" + problems(1)
                    + "\nnode-2:\n" + problems(2)
                    + "\nnode-2 on " + first.clientId() + ":\n" + mentions(2, first.clientId()), e);
        }
    }

    private static String mentions(int node, String clientId) {
        return cluster.node(node).process().stdout().lines().filter(l -> l.contains(clientId))
                .limit(20).collect(java.util.stream.Collectors.joining("\n"));
    }

    private static String problems(int node) {
        return cluster.node(node).process().stdout().lines().filter(l -> l.contains(" WARN ") || l.contains(" ERROR "))
                .limit(40).collect(java.util.stream.Collectors.joining("\n"));
    }

    /** PUBACK's reason code: 0 when the packet ends after the packet ID [MQTT-3.4.2-1]. */
    private static int pubAckReason(byte[] puback) {
        int at = 1;
        while ((puback[at] & 0x80) != 0) {
            at++; // the remaining length is longer than one byte with a reason string
        }
        int packetIdEnd = at + 1 + 2;
        return puback.length <= packetIdEnd ? 0 : puback[packetIdEnd] & 0xFF;
    }

    /** The PUBACK with its reason string, for a failure message. */
    private static String describe(byte[] puback) {
        return "PUBACK reason 0x" + Integer.toHexString(pubAckReason(puback)) + ": "
                + new String(puback, StandardCharsets.UTF_8).replaceAll("[^\\p{Print}]", ".");
    }

    @Test
    void aMaximumSizePublishReachesTwoThousandSubscribersOnTheOtherNodeExactlyOnce() throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < APPLICATIONS; i++) {
            ids.add("app-" + i);
        }
        // Long client IDs: the one downlink record for all of them would be larger than a record may be.
        String padding = "x".repeat(180);
        for (int i = APPLICATIONS; i < SUBSCRIBERS; i++) {
            ids.add("sub-" + i + "-" + padding);
        }
        // Precondition: the hand-off to node 2 (the message and, per subscriber, at least its client ID)
        // is larger than one record may be, so this test goes through the split.
        long handOff = MAX_PACKET_SIZE;
        for (String id : ids.subList(APPLICATIONS, ids.size())) {
            handOff += id.length();
        }
        assertTrue(handOff > new io.fleetmq.kafka.RecordLimits(MAX_PACKET_SIZE).maxDownlinkValueBytes(),
                "the downlink record must need splitting: " + handOff + " bytes");
        java.util.function.Function<String, byte[]> connect = id -> id.startsWith("app-")
                // Session Expiry Interval 3600 s: a persistent session, APPLICATION by its client ID.
                ? RawMqtt.connect(5, true, 600, id, "05 11 00000e10")
                : RawMqtt.connect(5, true, 600, id, "00");
        try (RawSubscribers subs = RawSubscribers.connect(cluster.port(2), ids.subList(0, WAVE), connect)) {
            // In waves, as devices come back after an outage, rather than all in the same millisecond.
            awaitAll(subs, "connected", c -> c.connAckReason() == 0);
            for (int from = WAVE; from < ids.size(); from += WAVE) {
                subs.add(cluster.port(2), ids.subList(from, Math.min(ids.size(), from + WAVE)), connect);
                awaitAll(subs, "connected", c -> c.connAckReason() == 0);
            }
            subs.sendAll(RawMqtt.subscribeV5(1, "big/#", 1));
            awaitAll(subs, "granted QoS 1", c -> c.subAckReason() == 1);
            Await.until(WAIT, "both nodes know every subscription", () ->
                    metric(1, "fleetmq_subscriptions") >= SUBSCRIBERS && metric(2, "fleetmq_subscriptions") >= SUBSCRIBERS);

            String publisher = publisherRoutedByNode1();
            try (RawMqtt pub = RawMqtt.connect(cluster.port(1))) {
                pub.send(RawMqtt.connectV5(publisher));
                pub.readType(2);
                pub.send(maximumPublish("big/retained", true, 1));
                byte[] ack = pub.readType(4);
                assertEquals(0, pubAckReason(ack), "the retained maximum-size PUBLISH is acknowledged: " + describe(ack));
                pub.send(maximumPublish("big/plain", false, 2));
                ack = pub.readType(4);
                assertEquals(0, pubAckReason(ack), "the maximum-size PUBLISH is acknowledged: " + describe(ack));
                // Same publisher, so routed after both: once every subscriber has it, a repeat would be there.
                pub.send(RawMqtt.publishV5("big/end", 1, 3, "end".getBytes(StandardCharsets.UTF_8)));
                assertEquals(0, pubAckReason(pub.readType(4)));
            }

            awaitAll(subs, "got the last message", c -> c.count("big/end") >= 1);
            for (RawSubscribers.Connection c : subs.connections()) {
                for (String topic : List.of("big/retained", "big/plain", "big/end")) {
                    assertEquals(1, c.count(topic), c.clientId() + " gets " + topic + " exactly once");
                }
                assertEquals(payloadOf("big/retained"), c.payloadLength("big/retained"), c.clientId());
                assertEquals(payloadOf("big/plain"), c.payloadLength("big/plain"), c.clientId());
                assertTrue(!c.closed(), c.clientId() + " is still connected, not ended by " + c.closeCause());
            }
        }

        Await.until(WAIT, "the routing backlog is empty on both nodes", () ->
                metric(1, "fleetmq_publish_routing_backlog") == 0 && metric(2, "fleetmq_publish_routing_backlog") == 0);
        assertEquals(0, droppedAsDeadLetters(1) + droppedAsDeadLetters(2), "nothing went to the dead-letter topic");

        // The retained message was stored: a subscriber that comes later gets it, whole.
        try (RawMqtt late = RawMqtt.connect(cluster.port(2))) {
            late.send(RawMqtt.connectV5("late-subscriber"));
            late.readType(2);
            late.send(RawMqtt.subscribeV5(1, "big/retained", 1));
            byte[] publish = late.readType(3);
            RawMqtt.Publish p = RawMqtt.parsePublishV5(publish);
            assertTrue(p.retain(), "sent as a retained message");
            assertEquals(payloadOf("big/retained"), p.payload().length);
        }
    }
}
