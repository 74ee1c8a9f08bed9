package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} of one node of three while QoS 1 messages flow between the other two: nothing
 * acknowledged is lost or duplicated, the dead node's clients resume on the survivors, and their
 * wills are published exactly once.
 */
class NodeDeathIT {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int PUBLISHERS = 6;
    private static final int DEVICES = 5;

    @TempDir
    Path workDir;

    private TestCluster cluster;
    private final List<Mqtt5BlockingClient> clients = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (Mqtt5BlockingClient c : clients) {
            try {
                if (c.getState().isConnected()) {
                    c.disconnect();
                }
            } catch (RuntimeException ignored) {
                // the node it was connected to is gone
            }
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private Mqtt5BlockingClient client(int node, String id) {
        Mqtt5BlockingClient c = Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1")
                .serverPort(cluster.port(node)).buildBlocking();
        clients.add(c);
        return c;
    }

    @Test
    void killingANodeUnderLoadLosesNothingAcknowledgedAndItsClientsResumeElsewhere() throws Exception {
        cluster = TestCluster.start(workDir, 3, Map.of());

        Mqtt5BlockingClient watcher = client(1, "will-watcher");
        watcher.connect();
        Map<String, AtomicInteger> wills = new ConcurrentHashMap<>();
        watcher.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> wills.computeIfAbsent(p.getTopic().toString(), t -> new AtomicInteger()).incrementAndGet());
        watcher.subscribeWith().topicFilter("wills/#").qos(MqttQos.AT_LEAST_ONCE).send();

        Mqtt5BlockingClient sink = client(3, "sink");
        sink.connect();
        List<String> received = new CopyOnWriteArrayList<>();
        sink.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> received.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
        sink.subscribeWith().topicFilter("load/#").qos(MqttQos.AT_LEAST_ONCE).send();

        // Devices on node 2, persistent, each with a will and a subscription of its own.
        for (int i = 0; i < DEVICES; i++) {
            Mqtt5BlockingClient d = client(2, "dev-" + i);
            d.connectWith().cleanStart(true).sessionExpiryInterval(300)
                    .willPublish().topic("wills/dev-" + i).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(("gone " + i).getBytes(StandardCharsets.UTF_8)).applyWillPublish().send();
            d.subscribeWith().topicFilter("cmd/dev-" + i).qos(MqttQos.AT_LEAST_ONCE).send();
        }

        List<Mqtt5BlockingClient> publishers = new ArrayList<>();
        for (int k = 0; k < PUBLISHERS; k++) {
            Mqtt5BlockingClient p = client(1, "pub-" + k);
            p.connect();
            publishers.add(p);
        }
        Await.until(WAIT, "the sink's subscription to reach node 1", () -> {
            publishers.get(0).publishWith().topic("load/probe").qos(MqttQos.AT_LEAST_ONCE)
                    .payload("probe".getBytes(StandardCharsets.UTF_8)).send();
            return received.contains("probe");
        });

        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        for (int k = 0; k < PUBLISHERS; k++) {
            Mqtt5BlockingClient p = publishers.get(k);
            String name = "p" + k;
            Thread t = new Thread(() -> {
                for (int seq = 0; running.get(); seq++) {
                    String payload = name + "-" + seq;
                    // Blocking publish returns after PUBACK: the message is then acknowledged.
                    p.publishWith().topic("load/" + name).qos(MqttQos.AT_LEAST_ONCE)
                            .payload(payload.getBytes(StandardCharsets.UTF_8)).send();
                    acknowledged.add(payload);
                }
            }, "publisher-" + k);
            t.start();
            threads.add(t);
        }
        try {
            Await.until(WAIT, "load before the kill", () -> acknowledged.size() >= 600);
            cluster.kill(2);
            int atKill = acknowledged.size();
            Await.until(WAIT, "load after the kill", () -> acknowledged.size() >= atKill + 900);
        } finally {
            running.set(false);
            for (Thread t : threads) {
                t.join(30_000);
            }
        }

        Await.until(WAIT, "every acknowledged message at the sink",
                () -> received.containsAll(acknowledged));
        List<String> messages = received.stream().filter(s -> !s.equals("probe")).toList();
        assertEquals(List.of(), ClusterIT.duplicates(messages), "no message delivered twice");
        for (int k = 0; k < PUBLISHERS; k++) {
            String prefix = "p" + k + "-";
            List<Integer> seqs = messages.stream().filter(s -> s.startsWith(prefix))
                    .map(s -> Integer.parseInt(s.substring(prefix.length()))).toList();
            for (int i = 1; i < seqs.size(); i++) {
                assertTrue(seqs.get(i) > seqs.get(i - 1),
                        "[MQTT-4.6.0-5] publisher " + k + " in order, but " + seqs.get(i - 1) + " came before " + seqs.get(i));
            }
        }

        // The dead node's clients' wills, published by a survivor once the death is certain.
        Await.until(WAIT, "the wills of node 2's clients", () -> wills.size() == DEVICES);

        // The devices come back on the survivors and find their sessions.
        Mqtt5BlockingClient commander = client(1, "commander");
        commander.connect();
        for (int i = 0; i < DEVICES; i++) {
            int node = i % 2 == 0 ? 1 : 3;
            Mqtt5BlockingClient d = client(node, "dev-" + i);
            List<String> got = new CopyOnWriteArrayList<>();
            d.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                    p -> got.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
            Mqtt5ConnAck ack = d.connectWith().cleanStart(false).sessionExpiryInterval(300).send();
            assertTrue(ack.isSessionPresent(), "dev-" + i + " resumes its session on node " + node);
            String topic = "cmd/dev-" + i;
            Await.until(WAIT, "dev-" + i + " to receive through its kept subscription", () -> {
                commander.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE)
                        .payload("hello".getBytes(StandardCharsets.UTF_8)).send();
                return got.contains("hello");
            });
        }
        for (int i = 0; i < DEVICES; i++) {
            assertEquals(1, wills.get("wills/dev-" + i).get(), "the will of dev-" + i + " exactly once");
        }
    }
}
