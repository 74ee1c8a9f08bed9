package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} of the node that handed a message to a persistent DEVICE session before storing
 * it, while its client has not acknowledged it: the other node reads the batch again and queues
 * every message of it, and the clients get them all when they come back, in order; the clients of
 * the surviving node, whose messages were partly stored and sent before, get none of them twice.
 */
class LiveDeliveryNodeDeathIT {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final String EXPIRY_300 = "05 11 00 00 01 2C";
    private static final int CLIENTS = 3;
    private static final int MESSAGES = 5;

    @TempDir
    Path workDir;

    private TestCluster cluster;
    private final List<RawMqtt> connections = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (RawMqtt c : connections) {
            c.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * How far the writers committed {@code device.persisted} (its one partition), and where it ends:
     * the first is behind the second while a message handed over is neither acknowledged nor stored.
     */
    private long[] devicePersistedCommittedAndEnd() {
        java.util.Properties props = new java.util.Properties();
        props.put("bootstrap.servers", io.fleetmq.testkit.TestServices.shared().kafkaBootstrapServers());
        org.apache.kafka.common.TopicPartition partition =
                new org.apache.kafka.common.TopicPartition(cluster.topicPrefix() + "device.persisted", 0);
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(props)) {
            var committed = admin.listConsumerGroupOffsets(cluster.topicPrefix() + "device-persisted")
                    .partitionsToOffsetAndMetadata().get().get(partition);
            long end = admin.listOffsets(Map.of(partition, org.apache.kafka.clients.admin.OffsetSpec.latest()))
                    .all().get().get(partition).offset();
            return new long[] {committed == null ? 0 : committed.offset(), end};
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The sum of the samples of {@code name} on a node; -1 when it does not answer. */
    private static double metric(int httpPort, String name) {
        HttpResponse<String> r = Http.get(httpPort, "/metrics");
        if (r == null || r.statusCode() != 200) {
            return -1;
        }
        Matcher m = Pattern.compile("^" + Pattern.quote(name) + "\\{[^}]*\\} (\\S+)$", Pattern.MULTILINE)
                .matcher(r.body());
        double sum = 0;
        while (m.find()) {
            sum += Double.parseDouble(m.group(1));
        }
        return sum;
    }

    private RawMqtt connect(int node, String id, boolean cleanStart) throws Exception {
        RawMqtt raw = RawMqtt.connect(cluster.port(node));
        connections.add(raw);
        raw.socketTimeout(60_000); // a session of a dead node is taken over once the cluster knows it is dead
        raw.send(RawMqtt.connect(5, cleanStart, 60, id, EXPIRY_300));
        RawMqtt.ConnAck connack = RawMqtt.parseConnAckV5(raw.readType(2));
        assertEquals(0, connack.reasonCode(), id);
        assertEquals(!cleanStart, connack.sessionPresent(), id);
        return raw;
    }

    /**
     * Resumes a session of the dead node: refused with 0x88 (Server unavailable) until the cluster
     * learned that its node is dead, as a client would retry.
     */
    private RawMqtt resume(int node, String id) throws Exception {
        RawMqtt[] accepted = new RawMqtt[1];
        Await.until(WAIT, id + " resumed on node " + node, () -> {
            RawMqtt raw;
            RawMqtt.ConnAck connack;
            try {
                raw = RawMqtt.connect(cluster.port(node));
                raw.socketTimeout(60_000);
                raw.send(RawMqtt.connect(5, false, 60, id, EXPIRY_300));
                connack = RawMqtt.parseConnAckV5(raw.readType(2));
                if (connack.reasonCode() == 0x88) {
                    raw.close();
                    return false;
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            connections.add(raw);
            assertEquals(0, connack.reasonCode(), id);
            assertTrue(connack.sessionPresent(), id);
            accepted[0] = raw;
            return true;
        });
        return accepted[0];
    }

    private static List<String> read(RawMqtt raw, int count, boolean ack) throws Exception {
        List<String> got = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
            got.add(new String(p.payload(), StandardCharsets.UTF_8));
            if (ack) {
                raw.send(RawMqtt.ack(0x40, p.packetId()));
            }
        }
        return got;
    }

    private static String id(int node, int i) {
        return "live-n" + node + "-" + i;
    }

    @Test
    void messagesHandedOverAndNotAcknowledgedWhenTheNodeDiesAreDeliveredAfterwards() throws Exception {
        cluster = TestCluster.start(workDir, 2, Map.of(
                // One partition: one node writes every queue, for its own clients without storing first.
                "KAFKA_DEVICE_PERSISTED_PARTITIONS", "1",
                // Long enough that nothing is stored before the kill.
                "DEVICE_LIVE_ACK_WAIT", "10s",
                "CLUSTER_NODE_TIMEOUT", "10s"));

        RawMqtt[][] subs = new RawMqtt[3][CLIENTS];
        for (int node = 1; node <= 2; node++) {
            for (int i = 0; i < CLIENTS; i++) {
                subs[node][i] = connect(node, id(node, i), true);
                subs[node][i].send(RawMqtt.subscribeV5(1, "live/" + id(node, i), 1));
                subs[node][i].readType(9);
            }
            int n = node;
            Await.until(WAIT, "node " + node + "'s sessions take their messages before they are stored",
                    () -> metric(cluster.node(n).httpPort(), "fleetmq_device_queue_live_sessions") >= CLIENTS);
        }

        Mqtt5BlockingClient pub = Mqtt5Client.builder().identifier("live-pub").serverHost("127.0.0.1")
                .serverPort(cluster.port(1)).buildBlocking();
        pub.connect();
        for (int m = 0; m < MESSAGES; m++) {
            for (int node = 1; node <= 2; node++) {
                for (int i = 0; i < CLIENTS; i++) {
                    pub.publishWith().topic("live/" + id(node, i)).qos(MqttQos.AT_LEAST_ONCE)
                            .payload(("m" + m).getBytes(StandardCharsets.UTF_8)).send();
                }
            }
        }
        pub.disconnect();

        List<String> expected = new ArrayList<>();
        for (int m = 0; m < MESSAGES; m++) {
            expected.add("m" + m);
        }
        // The node that writes the queues handed at least one message to a client of its own, which
        // has not acknowledged it: the writer waits for it (up to the 10 s), nothing is committed.
        int[] writer = new int[1];
        Await.until(WAIT, "the writing node holds a message for one of its clients", () -> {
            for (int node = 1; node <= 2; node++) {
                if (metric(cluster.node(node).httpPort(), "fleetmq_device_queue_live_held") >= 1) {
                    writer[0] = node;
                    return true;
                }
            }
            return false;
        });
        int dead = writer[0];
        int survivor = 3 - dead;
        assertEquals(0.0, metric(cluster.node(dead).httpPort(), "fleetmq_device_queue_live_total"),
                "none acknowledged or stored yet");

        long[] committedAndEnd = devicePersistedCommittedAndEnd();
        assertTrue(committedAndEnd[0] < committedAndEnd[1],
                "device.persisted is not committed past what is handed over and unsettled: committed "
                        + committedAndEnd[0] + ", end " + committedAndEnd[1]);

        cluster.kill(dead);

        for (int i = 0; i < CLIENTS; i++) {
            RawMqtt back = resume(survivor, id(dead, i));
            subs[dead][i] = back;
            assertEquals(expected, read(back, MESSAGES, true), id(dead, i) + ", after the kill, on node " + survivor);
        }
        // The surviving node read the batch again: its own clients got every message, and what they
        // got from their queues before the kill is not sent to them again.
        for (int i = 0; i < CLIENTS; i++) {
            assertEquals(expected, read(subs[survivor][i], MESSAGES, true), id(survivor, i));
        }
        for (int node = 1; node <= 2; node++) {
            for (int i = 0; i < CLIENTS; i++) {
                assertArrayEquals(RawMqtt.NOTHING, subs[node][i].readWithin(500), id(node, i) + " gets each once");
            }
        }
        assertTrue(metric(cluster.node(survivor).httpPort(), "fleetmq_device_queue_live_sessions") >= CLIENTS);
    }
}
