package io.fleetmq.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.publish.PublishConsumer;
import io.fleetmq.kafka.publish.PublishLog;
import io.fleetmq.kafka.publish.PublishedRecord;
import io.fleetmq.kafka.publish.TestLayout;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.TestServices;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Records that can never be handled go to the dead-letter topic, counted, and the partition moves on. */
class DeadLettersTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private TestLayout layout;
    private SimpleMeterRegistry registry;
    private ClusterProducer producer;
    private PublishConsumer consumer;

    @BeforeEach
    void setUp() {
        layout = TestLayout.create(1);
        registry = new SimpleMeterRegistry();
        producer = new ClusterProducer(layout.clients("node-1"));
    }

    @AfterEach
    void tearDown() {
        if (consumer != null) {
            consumer.close();
        }
        producer.close();
    }

    private double deadLettered() {
        var c = registry.find("fleetmq.messages.dropped").tag("reason", DeadLetters.DROP_REASON).counter();
        return c == null ? 0 : c.count();
    }

    private static String header(ConsumerRecord<String, byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    @Test
    void aRecordThatDoesNotDecodeIsDeadLetteredCountedAndCommittedPast() throws Exception {
        DeadLetters deadLetters = new DeadLetters(producer, layout.topics(), registry, Duration.ofSeconds(10));
        List<PublishedRecord> received = new CopyOnWriteArrayList<>();
        consumer = new PublishConsumer(layout.clients("node-1"), registry, received::add, owned -> { }, () -> true,
                null, null, deadLetters);
        consumer.start();
        byte[] garbage = {1, (byte) 0xFF, 0x13, 0x37};
        layout.produceRaw(layout.topics().publish(), "dev-9", garbage);
        BrokerMessage good = BrokerMessage.of("t/1", new byte[] {7}, 1, false, "dev-9", 1);
        try (PublishLog log = new PublishLog(layout.clients("publisher"), registry)) {
            log.append(good).get(10, TimeUnit.SECONDS);
        }

        Await.until(WAIT, "the good message after the bad one is routed", () -> !received.isEmpty());
        assertEquals(good, received.get(0).message());
        List<ConsumerRecord<String, byte[]>> letters = layout.readAll(layout.topics().deadLetter());
        assertEquals(1, letters.size());
        ConsumerRecord<String, byte[]> letter = letters.get(0);
        assertArrayEquals(garbage, letter.value());
        assertEquals("dev-9", letter.key());
        assertTrue(header(letter, DeadLetters.REASON).startsWith("malformed record"), header(letter, DeadLetters.REASON));
        assertEquals(layout.topics().publish(), header(letter, DeadLetters.SOURCE_TOPIC));
        assertEquals("0", header(letter, DeadLetters.SOURCE_PARTITION));
        assertEquals("0", header(letter, DeadLetters.SOURCE_OFFSET));
        Await.until(WAIT, "the dead letter is counted", () -> deadLettered() == 1);
        assertEquals(0, registry.find("fleetmq.messages.dropped").tag("reason", "malformed_record").counters().stream()
                .mapToDouble(c -> c.count()).sum(), "counted once, as a dead letter");

        // The partition moved on: the committed offset is past both records.
        try (Admin admin = layout.clients("check").admin()) {
            TopicPartition tp = new TopicPartition(layout.topics().publish(), 0);
            Await.until(WAIT, "the offset after both records is committed", () -> {
                try {
                    Map<TopicPartition, OffsetAndMetadata> committed = admin
                            .listConsumerGroupOffsets(PublishConsumer.groupId(layout.settings().topicPrefix()))
                            .partitionsToOffsetAndMetadata().get();
                    return committed.get(tp) != null && committed.get(tp).offset() == 2;
                } catch (Exception e) {
                    return false;
                }
            });
        }
    }

    @Test
    void aWriteTheTargetTopicCanNeverTakeIsKeptWithItsReasonAndTarget() throws Exception {
        String target = layout.settings().topicPrefix() + "small";
        try (Admin admin = layout.clients("setup").admin()) {
            admin.createTopics(List.of(new NewTopic(target, 1, (short) 1)
                    .configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "2000")))).all().get();
        }
        byte[] value = new byte[50_000];
        new java.util.Random(3).nextBytes(value); // incompressible, so it stays over the limit compressed
        Throwable error = null;
        try {
            producer.send(target, 0, "k", value, null).join();
        } catch (CompletionException e) {
            error = e;
        }
        assertTrue(DeadLetters.permanent(error), String.valueOf(error));

        DeadLetters deadLetters = new DeadLetters(producer, layout.topics(), registry, Duration.ofSeconds(10));
        deadLetters.send("not storable: " + error.getCause().getMessage(), layout.topics().publish(), 4, 99, target,
                "k", value);
        assertTrue(deadLetters.flushed());

        ConsumerRecord<String, byte[]> letter = layout.readAll(layout.topics().deadLetter()).get(0);
        assertArrayEquals(value, letter.value());
        assertEquals(target, header(letter, DeadLetters.TARGET_TOPIC));
        assertEquals("4", header(letter, DeadLetters.SOURCE_PARTITION));
        assertEquals("99", header(letter, DeadLetters.SOURCE_OFFSET));
        assertEquals(1, deadLettered());
    }

    @Test
    void aValueTooLargeEvenForTheDeadLetterTopicIsKeptWithoutIt() throws Exception {
        String prefix = "d" + UUID.randomUUID().toString().substring(0, 8) + ".";
        BrokerTopics topics = new BrokerTopics(prefix);
        KafkaSettings settings = new KafkaSettings(TestServices.shared().kafkaBootstrapServers(), prefix, 1, 1, 1,
                (short) 1, Duration.ofSeconds(10));
        try (Admin admin = new KafkaClients(settings, "setup").admin()) {
            admin.createTopics(List.of(new NewTopic(topics.deadLetter(), 1, (short) 1)
                    .configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "2000")))).all().get();
        }
        byte[] value = new byte[50_000];
        new java.util.Random(4).nextBytes(value);
        try (ClusterProducer own = new ClusterProducer(new KafkaClients(settings, "node-1"))) {
            DeadLetters deadLetters = new DeadLetters(own, topics, registry, Duration.ofSeconds(10));
            deadLetters.send("too large", topics.publish(), 0, 5, null, "k", value);
            assertTrue(deadLetters.flushed());
        }
        List<ConsumerRecord<String, byte[]>> letters = new CopyOnWriteArrayList<>();
        try (var c = new KafkaClients(settings, "reader").consumer("reader", null, Map.of())) {
            TopicPartition tp = new TopicPartition(topics.deadLetter(), 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            Await.until(WAIT, "the dead letter is read", () -> {
                c.poll(Duration.ofMillis(200)).forEach(letters::add);
                return !letters.isEmpty();
            });
        }
        assertNull(letters.get(0).value());
        assertTrue(header(letters.get(0), DeadLetters.REASON).contains("not kept"), header(letters.get(0), DeadLetters.REASON));
        assertEquals("5", header(letters.get(0), DeadLetters.SOURCE_OFFSET));
        assertEquals(1, deadLettered());
    }

    @Test
    void onlyErrorsNoRetryCuresArePermanent() {
        assertTrue(DeadLetters.permanent(new CompletionException(new RecordTooLargeException("big"))));
        assertTrue(DeadLetters.permanent(new org.apache.kafka.common.InvalidRecordException("bad")));
        assertFalse(DeadLetters.permanent(new CompletionException(new TimeoutException("slow"))));
        assertFalse(DeadLetters.permanent(new IllegalStateException("closed")));
        assertFalse(DeadLetters.permanent(null));
    }
}
