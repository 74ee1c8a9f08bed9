package io.fleetmq.kafka.publish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.embedded.EmbeddedKafkaServer;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.kafka.TopicLayout;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TcpProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes that find the producer's buffer full past {@code max.block.ms} (Kafka stalled behind a
 * proxy, the writer not asking {@link ConfirmedProducer#hasRoom()} first, as when several writers
 * passed the check together) are neither refused nor reordered: they are written once Kafka has room.
 */
class ConfirmedProducerFullBufferTest {

    private static final int RECORDS = 40;
    private static final int PAYLOAD = 16 * 1024;

    @TempDir
    Path dir;

    @Test
    void writesThatFindTheBufferFullAreWrittenLaterInOrderNotRefused() throws Exception {
        int proxied = FreePorts.next();
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", proxied)) {
            EmbeddedKafkaServer kafka = new EmbeddedKafkaServer(dir.resolve("kafka"), "127.0.0.1", 0, 0)
                    .withListener("PROXIED", proxied, proxy.address());
            kafka.start();
            try {
                String prefix = "full.";
                KafkaSettings direct = new KafkaSettings(kafka.bootstrapServers(), prefix, 1, 1, 1, (short) 1,
                        Duration.ofSeconds(30));
                BrokerTopics topics = new BrokerTopics(prefix);
                try (Admin admin = new KafkaClients(direct, "setup").admin()) {
                    new TopicLayout(admin, direct, topics).ensure();
                }
                KafkaSettings throughProxy = new KafkaSettings(proxy.address(), prefix, 1, 1, 1, (short) 1,
                        Duration.ofSeconds(30));
                SimpleMeterRegistry meters = new SimpleMeterRegistry();
                // A 256 KiB buffer holds 15 of the records; a write finding it full gives up after 100 ms.
                ConfirmedProducer producer = new ConfirmedProducer(new KafkaClients(throughProxy, "node-1"), "publish",
                        topics.publish(), "publish", Duration.ofMillis(100), 256 * 1024, meters);
                try {
                    producer.prepare();
                    proxy.pause(TcpProxy.Direction.UPSTREAM);
                    Random random = new Random(1);
                    List<CompletableFuture<Void>> writes = new ArrayList<>();
                    for (int i = 0; i < RECORDS; i++) {
                        byte[] payload = new byte[PAYLOAD];
                        random.nextBytes(payload); // incompressible
                        ByteBuffer.wrap(payload).putInt(i);
                        writes.add(producer.send("p", BrokerMessage.of("t", payload, 1, false, "p", i)));
                    }
                    assertTrue(writes.stream().noneMatch(CompletableFuture::isDone), "nothing stored or refused yet");
                    assertTrue(meters.get(ConfirmedProducer.DEFERRED_METER).counter().count() > 0,
                            "some writes found the buffer full");
                    assertFalse(producer.hasRoom(), "no room while writes are deferred");

                    proxy.resume(TcpProxy.Direction.UPSTREAM);
                    CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
                    assertTrue(meters.find(ConfirmedProducer.ERRORS_METER).counters().isEmpty(), "no write failed");
                    Await.until(Duration.ofSeconds(30), "room again", producer::hasRoom);
                } finally {
                    producer.close(Duration.ofSeconds(5));
                }
                assertEquals(inOrder(), stored(direct, topics.publish()), "every record, in the order written");
            } finally {
                kafka.stop();
            }
        }
    }

    private static List<Integer> inOrder() {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            all.add(i);
        }
        return all;
    }

    private static List<Integer> stored(KafkaSettings settings, String topic) throws Exception {
        List<Integer> seen = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers(),
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName()))) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen.size() < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    seen.add(ByteBuffer.wrap(MessageCodec.decode(r.value()).payload()).getInt());
                }
            }
        }
        return seen;
    }
}
