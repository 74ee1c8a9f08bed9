package io.fleetmq.kafka.publish;

import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.kafka.TopicLayout;
import io.fleetmq.testkit.TestServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The broker's topics under a prefix of their own in the shared test Kafka, so tests never see each
 * other's records or consumer groups.
 */
public final class TestLayout {

    private final KafkaSettings settings;
    private final BrokerTopics topics;

    private TestLayout(KafkaSettings settings) {
        this.settings = settings;
        this.topics = new BrokerTopics(settings.topicPrefix());
    }

    /** Creates every broker topic, {@code publish} with {@code publishPartitions} partitions. */
    public static TestLayout create(int publishPartitions) {
        String prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + ".";
        KafkaSettings settings = new KafkaSettings(TestServices.shared().kafkaBootstrapServers(), prefix,
                publishPartitions, 1, 1, (short) 1, Duration.ofSeconds(10));
        TestLayout layout = new TestLayout(settings);
        try (Admin admin = layout.clients("setup").admin()) {
            // ensure() returns once every partition's leader serves it, so writes are safe at once.
            new TopicLayout(admin, settings, layout.topics).ensure();
        }
        return layout;
    }

    public KafkaSettings settings() {
        return settings;
    }

    public BrokerTopics topics() {
        return topics;
    }

    public KafkaClients clients(String nodeId) {
        return new KafkaClients(settings, nodeId);
    }

    /** Writes raw bytes, bypassing the broker's encoding, as a foreign or broken writer would. */
    public void produceRaw(String topic, String key, byte[] value) throws Exception {
        try (KafkaProducer<String, byte[]> producer = clients("raw").producer("raw", Map.of())) {
            producer.send(new ProducerRecord<>(topic, key, value)).get();
        }
    }

    /** Every record of a single-partition-or-more topic as it is stored now, partition by partition. */
    public List<ConsumerRecord<String, byte[]>> readAll(String topic) {
        List<ConsumerRecord<String, byte[]>> all = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = clients("reader").consumer("reader", null, Map.of())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("could not read " + topic + " up to " + end + " within 30 s");
                }
                consumer.poll(Duration.ofMillis(200)).forEach(all::add);
            }
        }
        return all;
    }
}
