package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.app.support.KafkaBrokerCluster;
import io.fleetmq.app.support.PairLoad;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A three-broker Kafka cluster (replication factor 3, {@code min.insync.replicas} 2) under QoS 1
 * load from two broker nodes; the leader of a {@code publish} partition is killed with
 * {@code kill -9}. Kafka elects new leaders and nothing the broker acknowledged is lost.
 */
class KafkaLeaderKillIT {

    private static final Duration WAIT = Duration.ofMinutes(2);

    // Kept when the test fails: the nodes' logs are the first thing to read.
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path workDir;

    private KafkaBrokerCluster kafka;
    private TestCluster cluster;
    private PairLoad load;

    @AfterEach
    void stop() throws Exception {
        if (load != null) {
            load.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (kafka != null) {
            kafka.close();
        }
    }

    @Test
    void killingAPartitionLeaderLosesNothingAcknowledged() throws Exception {
        kafka = KafkaBrokerCluster.start(workDir.resolve("kafka"), 3);
        String prefix = "k" + UUID.randomUUID().toString().substring(0, 8) + ".";
        cluster = TestCluster.start(workDir, 2, Map.of(
                "KAFKA_BOOTSTRAP_SERVERS", kafka.bootstrapServers(),
                "KAFKA_TOPIC_PREFIX", prefix,
                "KAFKA_REPLICATION_FACTOR", "3",
                // As in production: an acknowledged write is on two Kafka nodes, so killing one loses nothing.
                "KAFKA_MIN_INSYNC_REPLICAS", "2",
                "KAFKA_REQUEST_TIMEOUT", "5s",
                "CLUSTER_HEARTBEAT_INTERVAL", "500ms",
                "CLUSTER_NODE_TIMEOUT", "6s"));
        load = new PairLoad("leader", 6, 2, cluster::port).connect(WAIT);
        load.start(Duration.ofMillis(20));
        long before = load.acknowledgedCount();
        Await.until(WAIT, "load before the kill", () -> load.acknowledgedCount() >= before + 300);

        int leader;
        try (Admin admin = kafka.admin()) {
            leader = admin.describeTopics(List.of(prefix + "publish")).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get(prefix + "publish").partitions().get(0).leader().id();
        }
        kafka.kill(leader);
        long atKill = load.acknowledgedCount();
        Await.until(WAIT, "load after the kill", () -> load.acknowledgedCount() >= atKill + 600);
        load.awaitDeliveryAfterNow(WAIT);
        load.stop(WAIT);

        List<List<Long>> missing = load.awaitAllAcknowledgedDelivered(WAIT);
        for (int i = 0; i < missing.size(); i++) {
            assertEquals(List.of(), missing.get(i), "acknowledged messages of pair " + i + " never delivered");
        }
        System.out.println("[KafkaLeaderKillIT] killed Kafka node " + leader + "; " + load.acknowledgedCount()
                + " acknowledged, " + load.refusedPublishes() + " refused with an error reason code, "
                + load.duplicates() + " delivered twice, client disconnects " + load.disconnectReasons());
    }
}
