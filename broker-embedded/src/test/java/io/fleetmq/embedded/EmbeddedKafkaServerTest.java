package io.fleetmq.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedKafkaServerTest {

    private static final String TOPIC = "restart-check";

    @TempDir
    Path dataDir;

    @Test
    void keepsRecordsAndClusterIdAcrossRestarts() throws Exception {
        EmbeddedKafkaServer server = new EmbeddedKafkaServer(dataDir, "127.0.0.1", 0, 0);
        server.start();
        String clusterId;
        int port;
        try {
            clusterId = server.clusterId();
            port = server.port();
            assertEquals("127.0.0.1:" + port, server.bootstrapServers());
            produce(server.bootstrapServers(), "first", "written before any restart");
        } finally {
            server.stop();
        }
        assertNull(server.bootstrapServers());

        // Same object: same ports, same JVM; a second in-process start must not trip over leftovers of the first.
        server.start();
        try {
            assertEquals(port, server.port());
            assertEquals(clusterId, server.clusterId());
            produce(server.bootstrapServers(), "second", "written after the first restart");
        } finally {
            server.stop();
        }

        // A new object on the same data dir, as after a process restart, on newly chosen ports.
        EmbeddedKafkaServer restarted = new EmbeddedKafkaServer(dataDir, "127.0.0.1", 0, 0);
        restarted.start();
        try {
            assertEquals(clusterId, restarted.clusterId());
            assertEquals(clusterId, metaProperties().getProperty("cluster.id"));
            assertEquals(
                    Map.of("first", "written before any restart", "second", "written after the first restart"),
                    consume(restarted.bootstrapServers(), 2));
        } finally {
            restarted.stop();
        }
    }

    @Test
    void refusesTheLogDirOfAnotherNodeWithAOneLineMessage() throws Exception {
        EmbeddedKafkaServer server = new EmbeddedKafkaServer(dataDir, "127.0.0.1", 0, 0);
        server.start();
        server.stop();
        Path meta = dataDir.resolve("kafka").resolve("meta.properties");
        Files.writeString(meta, Files.readString(meta).replace("node.id=1", "node.id=7"));

        EmbeddedKafkaServer foreign = new EmbeddedKafkaServer(dataDir, "127.0.0.1", 0, 0);
        EmbeddedServiceException failure = assertThrows(EmbeddedServiceException.class, foreign::start);

        assertTrue(failure.getMessage().startsWith("embedded Kafka: start failed: "), failure.getMessage());
        assertTrue(failure.getMessage().contains("node id 7"), failure.getMessage());
        assertFalse(failure.getMessage().contains("\n"), "one line");
        assertFalse(foreign.isRunning());
    }

    private Properties metaProperties() throws Exception {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(dataDir.resolve("kafka").resolve("meta.properties"))) {
            properties.load(in);
        }
        assertNotNull(properties.getProperty("cluster.id"));
        return properties;
    }

    private static void produce(String bootstrapServers, String key, String value) throws Exception {
        Map<String, Object> config = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            producer.send(new ProducerRecord<>(TOPIC, key, value)).get(30, TimeUnit.SECONDS);
        }
    }

    /** Reads the topic from the beginning until {@code expected} records arrived or 30 s passed. */
    private static Map<String, String> consume(String bootstrapServers, int expected) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            TopicPartition partition = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(500)).forEach(records::add);
            }
        }
        Map<String, String> byKey = new java.util.TreeMap<>();
        records.forEach(record -> byKey.put(record.key(), record.value()));
        return byKey;
    }
}
