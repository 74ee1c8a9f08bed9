package io.fleetmq.kafka.publish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.message.UserProperty;
import io.fleetmq.core.retained.LogPosition;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.testkit.FreePorts;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Promise 1, "acknowledged means stored", at the Kafka end, against the embedded Kafka. */
class PublishLogTest {

    private static TestLayout layout;

    private SimpleMeterRegistry registry;
    private PublishLog log;

    @BeforeAll
    static void createTopics() {
        layout = TestLayout.create(4);
    }

    @BeforeEach
    void setUp() {
        registry = new SimpleMeterRegistry();
        log = new PublishLog(layout.clients("node-1"), registry);
    }

    @AfterEach
    void tearDown() {
        log.close();
    }

    private static BrokerMessage message(String publisher, String topic, String payload) {
        return new BrokerMessage(topic, payload.getBytes(StandardCharsets.UTF_8), 1, false, publisher,
                System.currentTimeMillis(), 30, 1, "text/plain", null, null, List.of(new UserProperty("k", "v")));
    }

    @Test
    void everyAppendIsReportedWithItsPlaceBeforeItsFutureCompletesInOffsetOrder() throws Exception {
        List<String> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        log.onStored((message, partition, offset) -> told.add(new String(message.payload(), StandardCharsets.UTF_8)
                + "@" + partition + "@" + offset));
        try {
            List<CompletableFuture<Integer>> toldOnCompletion = new java.util.ArrayList<>();
            for (int i = 0; i < 50; i++) {
                toldOnCompletion.add(log.append(message("stored-1", "stored/t", "m" + i)).thenApply(v -> told.size()));
            }
            CompletableFuture<LogPosition> last = log.appendAt(message("stored-1", "stored/t", "m50"));
            for (int i = 0; i < 50; i++) {
                assertTrue(toldOnCompletion.get(i).get(10, TimeUnit.SECONDS) >= i + 1, "told before completion");
            }
            LogPosition at = last.get(10, TimeUnit.SECONDS);
            List<String> stored = new ArrayList<>();
            for (ConsumerRecord<String, byte[]> r : layout.readAll(layout.topics().publish())) {
                BrokerMessage m = "stored-1".equals(r.key()) ? MessageCodec.decode(r.value()) : null;
                if (m != null && m.topic().equals("stored/t")) {
                    stored.add(new String(m.payload(), StandardCharsets.UTF_8) + "@" + r.partition() + "@" + r.offset());
                }
            }
            assertEquals(stored, told, "each once, with the place Kafka gave it, in offset order");
            assertEquals("m50@" + at.partition() + "@" + at.offset(), told.get(50));
        } finally {
            log.onStored(null);
        }
    }

    @Test
    void aRetainedAppendIsReportedWithItsPositionBeforeItsFutureCompletes() throws Exception {
        List<String> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        log.onRetainedStored((message, at) -> told.add(message.topic() + "@" + at));
        BrokerMessage plain = message("told-1", "plain/t", "p");
        BrokerMessage m = message("told-1", "kept/t", "r");
        BrokerMessage retained = new BrokerMessage(m.topic(), m.payload(), 1, true, m.publisherId(), m.createdAtMillis(),
                -1, 1, null, null, null, List.of());
        log.append(plain).get(10, TimeUnit.SECONDS);
        CompletableFuture<Void> appended = log.append(retained);
        CompletableFuture<List<String>> seenOnCompletion = appended.thenApply(v -> List.copyOf(told));
        assertEquals(1, seenOnCompletion.get(10, TimeUnit.SECONDS).size(), "told before completion: " + told);
        List<ConsumerRecord<String, byte[]>> ofPublisher = layout.readAll(layout.topics().publish()).stream()
                .filter(r -> "told-1".equals(r.key())).toList();
        assertEquals(2, ofPublisher.size());
        ConsumerRecord<String, byte[]> stored = ofPublisher.get(1); // one partition per publisher, in order
        assertEquals(List.of("kept/t@" + stored.partition() + "@" + stored.offset()), told, "only the retained one");
    }

    @Test
    void aCompletedAppendIsInTheTopicKeyedByThePublisher() throws Exception {
        BrokerMessage m = message("stored-1", "a/b", "hello " + System.nanoTime());
        log.append(m).get(10, TimeUnit.SECONDS);

        // A fresh reader finds it at once: completion came after Kafka stored it.
        List<ConsumerRecord<String, byte[]>> stored = layout.readAll(layout.topics().publish()).stream()
                .filter(r -> "stored-1".equals(r.key())).toList();
        assertEquals(1, stored.size());
        assertEquals(m, MessageCodec.decode(stored.get(0).value()));
        assertEquals(1, registry.get("fleetmq.kafka.produce.latency").tag("topic", "publish").timer().count());
    }

    @Test
    void allMessagesOfOnePublisherShareOnePartition() throws Exception {
        List<CompletableFuture<Void>> appends = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            appends.add(log.append(message("keyed-" + (i % 10), "t/" + i, "m" + i)));
        }
        CompletableFuture.allOf(appends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

        Map<String, Set<Integer>> partitionsByPublisher = new HashMap<>();
        for (ConsumerRecord<String, byte[]> r : layout.readAll(layout.topics().publish())) {
            if (r.key().startsWith("keyed-")) {
                assertEquals(r.key(), MessageCodec.decode(r.value()).publisherId());
                partitionsByPublisher.computeIfAbsent(r.key(), k -> new HashSet<>()).add(r.partition());
            }
        }
        assertEquals(10, partitionsByPublisher.size());
        partitionsByPublisher.forEach((publisher, partitions) -> assertEquals(1, partitions.size(), publisher));
        // With 10 keys over 4 partitions, more than one partition is used (the key, not a constant, decides).
        assertTrue(partitionsByPublisher.values().stream().flatMap(Set::stream).distinct().count() > 1);
    }

    @Test
    void anUnreachableKafkaFailsTheFutureWithoutHoldingTheCaller() throws Exception {
        // A request timeout of 30 s: only the producer's own max-block bound keeps append() short.
        KafkaSettings nowhere = new KafkaSettings("127.0.0.1:" + FreePorts.next(), "x.", 1, 1, 1, (short) 1,
                Duration.ofSeconds(30));
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        PublishLog unreachable = new PublishLog(new KafkaClients(nowhere, "node-x"), meters, Duration.ofMillis(200));
        try {
            long start = System.nanoTime();
            CompletableFuture<Void> append = unreachable.append(message("p", "a", "lost"));
            long blockedMillis = (System.nanoTime() - start) / 1_000_000;
            // Generous against the 200 ms bound; without the bound this would take the 30 s request timeout.
            assertTrue(blockedMillis < 10_000, "append blocked " + blockedMillis + " ms");

            ExecutionException e = assertThrows(ExecutionException.class, () -> append.get(20, TimeUnit.SECONDS));
            assertInstanceOf(TimeoutException.class, e.getCause());
            assertEquals(1, meters.get("fleetmq.kafka.produce.errors")
                    .tags("topic", "publish", "error", "TimeoutException").counter().count());
        } finally {
            unreachable.close(Duration.ofSeconds(1));
        }
    }

    @Test
    void appendAfterCloseFailsTheFutureInsteadOfThrowing() {
        log.close();
        CompletableFuture<Void> append = log.append(message("p", "a", "late"));
        ExecutionException e = assertThrows(ExecutionException.class, () -> append.get(1, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(1, registry.get("fleetmq.kafka.produce.errors").tag("error", "IllegalStateException")
                .counter().count());
        log.close(); // idempotent
    }

    @Test
    void aMessageThatCannotBeEncodedFailsTheFutureAndIsCounted() {
        CompletableFuture<Void> append = log.append(BrokerMessage.of("bad\uD800", new byte[1], 0, false, "p", 0));
        ExecutionException e = assertThrows(ExecutionException.class, () -> append.get(1, TimeUnit.SECONDS));
        // A permanent failure: the routing path dead-letters such a record instead of retrying it.
        assertInstanceOf(org.apache.kafka.common.errors.SerializationException.class, e.getCause());
        assertInstanceOf(IllegalArgumentException.class, e.getCause().getCause());
        assertTrue(io.fleetmq.kafka.DeadLetters.permanent(e.getCause()));
        assertEquals(1, registry.get("fleetmq.kafka.produce.errors").tag("error", "SerializationException")
                .counter().count());
    }
}
