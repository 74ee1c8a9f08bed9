package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.KafkaBrokerCluster;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Promise 1 ("acknowledged means stored") when Kafka loses a machine: three Kafka nodes,
 * replication factor 3 and {@code min.insync.replicas} 2, QoS 1 publishers running, and the node
 * leading the partition one publisher writes to killed with SIGKILL. Every message that got its
 * PUBACK reaches the subscriber on the other broker node; publishes refused meanwhile (no PUBACK)
 * may go missing, acknowledged ones may not.
 */
class KafkaLeaderLossIT {

    private static final Duration WAIT = Duration.ofMinutes(3);
    private static final int PUBLISHERS = 4;

    @TempDir
    Path workDir;

    /** Publishes numbered QoS 1 messages as fast as PUBACKs come and remembers the acknowledged ones. */
    private static final class Publisher {
        final Set<String> acked = new ConcurrentSkipListSet<>();
        final AtomicInteger refused = new AtomicInteger();
        final AtomicBoolean running = new AtomicBoolean(true);
        final java.util.concurrent.atomic.AtomicLong lastAckAt = new java.util.concurrent.atomic.AtomicLong();
        final Thread thread;

        Publisher(Mqtt5BlockingClient client, int index) {
            thread = new Thread(() -> {
                for (int n = 0; running.get(); n++) {
                    String payload = index + ":" + n;
                    try {
                        client.publishWith().topic("load/" + index).qos(MqttQos.AT_LEAST_ONCE)
                                .payload(payload.getBytes(StandardCharsets.UTF_8)).send();
                        acked.add(payload);
                        lastAckAt.set(System.nanoTime());
                    } catch (RuntimeException e) {
                        refused.incrementAndGet(); // an error PUBACK or a lost connection: not acknowledged
                        try {
                            Thread.sleep(50); // do not spin while Kafka elects a new leader
                        } catch (InterruptedException interrupted) {
                            return;
                        }
                    }
                }
            }, "publisher-" + index);
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.MINUTES.toMillis(2));
        }
    }

    /** What went missing, per publisher, and what the broker nodes logged: for a failure to be understood. */
    private static void report(Set<String> acked, Set<String> received, List<Publisher> publishers, TestCluster cluster) {
        for (int i = 0; i < publishers.size(); i++) {
            List<Integer> missing = new ArrayList<>();
            for (String a : publishers.get(i).acked) {
                if (!received.contains(a)) {
                    missing.add(Integer.parseInt(a.substring(a.indexOf(':') + 1)));
                }
            }
            java.util.Collections.sort(missing);
            System.out.printf("publisher %d: %d acknowledged, %d refused, %d missing: %s%n", i,
                    publishers.get(i).acked.size(), publishers.get(i).refused.get(), missing.size(),
                    missing.size() > 40 ? missing.subList(0, 20) + " ... " + missing.subList(missing.size() - 20,
                            missing.size()) : missing);
        }
        for (int n = 1; n <= 2; n++) {
            System.out.println("---- node " + n + " drops, and its log (WARN and ERROR, not retried commits)");
            io.fleetmq.app.support.Http.get(cluster.node(n).httpPort(), "/metrics").body().lines()
                    .filter(l -> l.startsWith("fleetmq_messages_dropped_total")).forEach(System.out::println);
            cluster.node(n).process().stdout().lines().filter(l -> l.contains("WARN") || l.contains("ERROR"))
                    .filter(l -> !l.contains("RetriableCommitFailedException")).limit(80).forEach(System.out::println);
        }
    }

    @Test
    void killingThePublishPartitionLeaderLosesNothingAcknowledged() throws Exception {
        String prefix = "k" + UUID.randomUUID().toString().substring(0, 8) + ".";
        try (KafkaBrokerCluster kafka = KafkaBrokerCluster.start(workDir.resolve("kafka"), 3);
                TestCluster cluster = TestCluster.start(workDir.resolve("nodes"), 2, Map.of(
                        "KAFKA_BOOTSTRAP_SERVERS", kafka.bootstrapServers(),
                        "KAFKA_TOPIC_PREFIX", prefix,
                        "KAFKA_REPLICATION_FACTOR", "3",
                        // Heartbeats go through Kafka too: with a node timeout shorter than the
                        // partition failover (several seconds), each broker node judges the other
                        // dead while both serve, and the sessions it then settles lose messages.
                        // That is the membership's concern; this test is about Kafka's durability.
                        "CLUSTER_NODE_TIMEOUT", "30s"))) {
            Set<String> received = new ConcurrentSkipListSet<>();
            Mqtt5BlockingClient sub = Mqtt5Client.builder().identifier("load-sub").serverHost("127.0.0.1")
                    .serverPort(cluster.port(2)).buildBlocking();
            sub.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                    p -> received.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
            sub.connectWith().cleanStart(true).send();
            sub.subscribeWith().topicFilter("load/#").qos(MqttQos.AT_LEAST_ONCE).send();

            // The subscription reaches the routing nodes a moment after SUBACK: probe until it does.
            Mqtt5BlockingClient probe = Mqtt5Client.builder().identifier("load-probe").serverHost("127.0.0.1")
                    .serverPort(cluster.port(1)).buildBlocking();
            probe.connect();
            Await.until(WAIT, "the subscription is routed", () -> {
                probe.publishWith().topic("load/probe").qos(MqttQos.AT_LEAST_ONCE)
                        .payload("probe".getBytes(StandardCharsets.UTF_8)).send();
                return received.contains("probe");
            });
            probe.disconnect();

            List<Publisher> publishers = new ArrayList<>();
            for (int i = 0; i < PUBLISHERS; i++) {
                Mqtt5BlockingClient c = Mqtt5Client.builder().identifier("load-" + i).serverHost("127.0.0.1")
                        .serverPort(cluster.port(1)).buildBlocking();
                c.connectWith().cleanStart(true).send();
                publishers.add(new Publisher(c, i));
            }
            Await.until(WAIT, "load before the kill", () -> publishers.get(0).acked.size() >= 300);

            int victim;
            try (Admin admin = kafka.admin()) {
                String topic = prefix + "publish";
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                        .get(topic);
                assertEquals(3, d.partitions().get(0).replicas().size(), "the publish topic has three replicas");
                int partition = Utils.toPositive(Utils.murmur2("load-0".getBytes(StandardCharsets.UTF_8)))
                        % d.partitions().size();
                victim = d.partitions().get(partition).leader().id();
            }
            int ackedAtKill = publishers.get(0).acked.size();
            kafka.kill(victim);
            long killedAt = System.nanoTime();
            System.out.printf("Killed Kafka node %d, leader of load-0's publish partition, after %d acknowledged%n",
                    victim, ackedAtKill);

            // The partition gets a new leader from the in-sync replicas and acknowledging goes on.
            Await.until(WAIT, "load-0 acknowledged again after the kill",
                    () -> publishers.get(0).acked.size() > ackedAtKill + 1);
            System.out.printf("load-0 acknowledged again %.1f s after the kill%n",
                    (publishers.get(0).lastAckAt.get() - killedAt) / 1e9);
            Await.until(WAIT, "load-0 keeps being acknowledged", () -> publishers.get(0).acked.size() >= ackedAtKill + 300);
            for (Publisher p : publishers) {
                p.stop();
            }

            Set<String> acked = new TreeSet<>();
            publishers.forEach(p -> acked.addAll(p.acked));
            int refused = publishers.stream().mapToInt(p -> p.refused.get()).sum();
            try {
                Await.until(WAIT, "every acknowledged message arrives", () -> received.containsAll(acked));
            } catch (AssertionError e) {
                report(acked, received, publishers, cluster);
                throw e;
            }
            Set<String> missing = new TreeSet<>(acked);
            missing.removeAll(received);
            assertEquals(Set.of(), missing);
            assertTrue(acked.size() > PUBLISHERS * 300, "load ran: " + acked.size());
            System.out.printf("%d acknowledged, all received; %d refused during the failover%n", acked.size(), refused);
            sub.disconnect();
        }
    }
}
