package io.fleetmq.session.cluster;

import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.kafka.TopicLayout;
import io.fleetmq.kafka.cluster.ClusterSettings;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.testkit.Await;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.admin.Admin;

/**
 * One node's view of a Kafka for the cluster tests of this module: its own topic prefix, the
 * cluster's topics and the node's, and a membership that serves. What it opened goes into the
 * caller's list, to be closed last first.
 */
record KafkaNode(KafkaClients clients, Admin admin, BrokerTopics topics, Membership membership) {

    static KafkaNode start(String bootstrapServers, String prefix, String nodeId, List<AutoCloseable> closing)
            throws Exception {
        KafkaSettings settings = new KafkaSettings(bootstrapServers, prefix, 1, 2, 1, (short) 1, Duration.ofSeconds(5));
        BrokerTopics topics = new BrokerTopics(prefix);
        KafkaClients clients = new KafkaClients(settings, nodeId);
        Admin admin = clients.admin();
        closing.add(admin);
        TopicLayout layout = new TopicLayout(admin, settings, topics);
        layout.ensure();
        layout.ensureNodeTopics(nodeId, 1);
        Membership membership = new Membership(clients, admin,
                new ClusterSettings(nodeId, Duration.ofMillis(200), Duration.ofSeconds(3), 1, Duration.ofSeconds(5), null),
                System::currentTimeMillis);
        closing.add(membership);
        membership.start(Duration.ofSeconds(30));
        Await.until(Duration.ofSeconds(10), "the node to serve", membership::serving);
        return new KafkaNode(clients, admin, topics, membership);
    }
}
