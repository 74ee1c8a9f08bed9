package io.fleetmq.kafka.publish;

import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.kafka.TopicLayout;
import io.fleetmq.testkit.TestServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
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
            TopicLayout topicLayout = new TopicLayout(admin, settings, layout.topics);
            topicLayout.ensure();
            awaitLeadersServing(admin, topicLayout.declaredTopics().stream().map(NewTopic::name).toList());
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("test topics did not become writable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return layout;
    }

    /**
     * Waits until the leader of every partition serves it. Kafka 4.4 brokers have a defect
     * (KAFKA-15591, fixed in 4.5): an idempotent producer's first writes to a partition the broker is
     * still creating can be reordered, and the earlier batch then fails after delivery.timeout.ms.
     * A ListOffsets request goes to the leader and is retried by the admin client until the partition
     * is online there, so once it answers, writes are safe.
     */
    private static void awaitLeadersServing(Admin admin, List<String> topics)
            throws ExecutionException, InterruptedException, TimeoutException {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).forEach((name, description) ->
                description.partitions().forEach(p -> latest.put(new TopicPartition(name, p.partition()),
                        OffsetSpec.latest())));
        admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS);
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
