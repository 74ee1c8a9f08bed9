package io.fleetmq.kafka.cluster;

import io.fleetmq.kafka.KafkaClients;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The one producer of a node's cluster traffic: session events, answers and commands to nodes,
 * state records and hand-offs to other nodes. acks=all with idempotence, like every producer of the
 * broker; every write is a future that completes once Kafka stored it.
 */
public final class ClusterProducer implements AutoCloseable {

    private final KafkaProducer<String, byte[]> producer;
    private final Duration closeTimeout;
    private final Map<String, Integer> partitionCounts = new ConcurrentHashMap<>();

    public ClusterProducer(KafkaClients clients) {
        // Not KafkaClients.SEND_WHEN_FREE: measured twice, it gained CONNECT nothing, and the persistent
        // DEVICE path about 13 %, within reach of the spread (docs/benchmarks.md).
        this.producer = clients.producer("cluster", Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, 2_000));
        this.closeTimeout = clients.settings().requestTimeout();
    }

    /** Writes a record; {@code partition} null lets the key choose it, {@code value} null is a tombstone. */
    public CompletableFuture<RecordMetadata> send(String topic, Integer partition, String key, byte[] value,
            RecordHeaders headers) {
        CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
        try {
            producer.send(new ProducerRecord<>(topic, partition, key, value, headers), (metadata, error) -> {
                if (error == null) {
                    result.complete(metadata);
                } else {
                    result.completeExceptionally(error);
                }
            });
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    public CompletableFuture<RecordMetadata> send(String topic, String key, byte[] value) {
        return send(topic, null, key, value, null);
    }

    /** The partition count of {@code topic}, cached after the first look-up. */
    public int partitions(String topic) {
        return partitionCounts.computeIfAbsent(topic, t -> producer.partitionsFor(t).size());
    }

    /** Blocks until every write handed over so far has completed (stored or failed). */
    public void flush() {
        producer.flush();
    }

    @Override
    public void close() {
        producer.close(closeTimeout);
    }

    /** Closes, giving records still in flight at most {@code timeout}; the rest fail. */
    public void close(Duration timeout) {
        producer.close(timeout);
    }
}
