package io.fleetmq.kafka.publish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.UserProperty;
import io.fleetmq.testkit.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Reading the {@code publish} topic back, against the embedded Kafka; each test has its own topics and group. */
class PublishConsumerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private TestLayout layout;
    private SimpleMeterRegistry registry;
    private PublishLog log;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeEach
    void setUp() {
        layout = TestLayout.create(4);
        registry = new SimpleMeterRegistry();
        log = new PublishLog(layout.clients("publisher-node"), registry);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        log.close();
    }

    private PublishConsumer consumer(String node, Consumer<PublishedRecord> handler) {
        return consumer(node, handler, owned -> { });
    }

    private PublishConsumer consumer(String node, Consumer<PublishedRecord> handler, Consumer<Set<Integer>> ownership) {
        PublishConsumer c = new PublishConsumer(layout.clients(node), registry, handler, ownership);
        toClose.add(c);
        c.start();
        return c;
    }

    /** Payload = publisher's sequence number, so order and duplicates can be checked. */
    private static BrokerMessage numbered(String publisher, int sequence) {
        byte[] payload = ByteBuffer.allocate(4).putInt(sequence).array();
        return BrokerMessage.of("seq/" + publisher, payload, 1, false, publisher, System.currentTimeMillis());
    }

    private static int sequence(PublishedRecord r) {
        return ByteBuffer.wrap(r.message().payload()).getInt();
    }

    private void appendAll(List<BrokerMessage> messages) throws Exception {
        List<CompletableFuture<Void>> appends = new ArrayList<>();
        messages.forEach(m -> appends.add(log.append(m)));
        CompletableFuture.allOf(appends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    }

    private double dropped(String reason) {
        return registry.get("fleetmq.messages.dropped").tag("reason", reason).counter().count();
    }

    @Test
    void aMessageComesBackWithEveryField_MQTT_3_3_2_17() throws Exception {
        List<PublishedRecord> received = new CopyOnWriteArrayList<>();
        consumer("node-1", received::add);
        BrokerMessage sent = new BrokerMessage("home/kitchen/temp", "21.5".getBytes(StandardCharsets.UTF_8), 2, true,
                "thermo-7", System.currentTimeMillis(), 600, 1, "text/plain", "home/kitchen/temp/reply",
                new byte[] {1, 2, 3}, List.of(new UserProperty("unit", "C"), new UserProperty("unit", "F")));
        log.append(sent).get(10, TimeUnit.SECONDS);

        Await.until(WAIT, "the message is consumed", () -> !received.isEmpty());
        PublishedRecord r = received.get(0);
        assertEquals(sent, r.message());
        assertTrue(r.partition() >= 0 && r.partition() < 4, "partition " + r.partition());
        assertEquals(0, r.offset());
    }

    @Test
    void eachPublishersOrderIsKeptAcrossInterleavedPublishers() throws Exception {
        List<PublishedRecord> received = new CopyOnWriteArrayList<>();
        consumer("node-1", received::add);
        List<BrokerMessage> messages = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            messages.add(numbered("pub-" + (i % 10), i / 10));
        }
        appendAll(messages);

        Await.until(WAIT, "1,000 messages are consumed", () -> received.size() >= 1_000);
        Map<String, List<Integer>> byPublisher = new HashMap<>();
        for (PublishedRecord r : received) {
            byPublisher.computeIfAbsent(r.message().publisherId(), p -> new ArrayList<>()).add(sequence(r));
        }
        assertEquals(10, byPublisher.size());
        List<Integer> expected = new ArrayList<>();
        for (int s = 0; s < 100; s++) {
            expected.add(s);
        }
        byPublisher.forEach((publisher, sequences) -> assertEquals(expected, sequences, publisher));
    }

    @Test
    void aMalformedRecordIsSkippedAndCountedAndTheNextOneDelivered() throws Exception {
        List<PublishedRecord> received = new CopyOnWriteArrayList<>();
        PublishConsumer consumer = consumer("node-1", received::add);
        // Same key as the good message, so same partition, so they are read in this order.
        layout.produceRaw(layout.topics().publish(), "dev-9", new byte[] {1, (byte) 0xFF, 0x13, 0x37});
        layout.produceRaw(layout.topics().publish(), "dev-9", null);
        BrokerMessage good = numbered("dev-9", 1);
        log.append(good).get(10, TimeUnit.SECONDS);

        Await.until(WAIT, "the good message is consumed", () -> !received.isEmpty());
        assertEquals(List.of(good), received.stream().map(PublishedRecord::message).toList());
        assertEquals(2, received.get(0).offset());
        assertEquals(2, dropped("malformed_record"));
        assertTrue(consumer.isRunning());
    }

    @Test
    void aFailingHandlerIsCountedAndConsumptionGoesOn() throws Exception {
        List<PublishedRecord> received = new CopyOnWriteArrayList<>();
        PublishConsumer consumer = consumer("node-1", r -> {
            if (sequence(r) == 0) {
                throw new IllegalStateException("router bug");
            }
            received.add(r);
        });
        appendAll(List.of(numbered("dev-1", 0), numbered("dev-1", 1)));

        Await.until(WAIT, "the second message is consumed", () -> !received.isEmpty());
        assertEquals(1, sequence(received.get(0)));
        assertEquals(1, dropped("handler_failed"));
        assertTrue(consumer.isRunning());
    }

    @Test
    void twoNodesSplitThePartitionsAndTogetherSeeEveryMessageExactlyOnce() throws Exception {
        List<PublishedRecord> onNode1 = new CopyOnWriteArrayList<>();
        List<PublishedRecord> onNode2 = new CopyOnWriteArrayList<>();
        PublishConsumer node1 = consumer("node-1", onNode1::add);
        PublishConsumer node2 = consumer("node-2", onNode2::add);
        Await.until(WAIT, "both nodes own a disjoint share of all 4 partitions", () -> {
            Set<Integer> a = node1.ownedPartitions();
            Set<Integer> b = node2.ownedPartitions();
            Set<Integer> union = new HashSet<>(a);
            union.addAll(b);
            return !a.isEmpty() && !b.isEmpty() && Collections.disjoint(a, b) && union.equals(Set.of(0, 1, 2, 3));
        });
        Set<Integer> owned1 = node1.ownedPartitions();
        Set<Integer> owned2 = node2.ownedPartitions();

        List<BrokerMessage> messages = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            messages.add(numbered("pub-" + (i % 50), i / 50));
        }
        appendAll(messages);

        Await.until(WAIT, "1,000 messages are consumed", () -> onNode1.size() + onNode2.size() >= 1_000);
        Set<String> seen = new HashSet<>();
        for (PublishedRecord r : onNode1) {
            assertTrue(owned1.contains(r.partition()), "node 1 got partition " + r.partition());
            assertTrue(seen.add(r.message().publisherId() + "#" + sequence(r)), "duplicate " + r);
        }
        for (PublishedRecord r : onNode2) {
            assertTrue(owned2.contains(r.partition()), "node 2 got partition " + r.partition());
            assertTrue(seen.add(r.message().publisherId() + "#" + sequence(r)), "duplicate " + r);
        }
        assertEquals(1_000, seen.size());
        assertFalse(onNode1.isEmpty());
        assertFalse(onNode2.isEmpty());

        node1.close();
        node2.close();
        assertFalse(node1.isRunning());
        assertFalse(node2.isRunning());
        assertTrue(node1.failure().isEmpty());
        assertTrue(node2.failure().isEmpty());
        assertEquals(Set.of(), node1.ownedPartitions());
        assertEquals(0, dropped("malformed_record") + dropped("handler_failed"));
    }

    @Test
    void handledRecordsAreCommittedSoTheNextConsumerStartsAfterThem() throws Exception {
        List<PublishedRecord> first = new CopyOnWriteArrayList<>();
        PublishConsumer before = consumer("node-1", first::add);
        List<BrokerMessage> batch = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            batch.add(numbered("dev-1", i));
        }
        appendAll(batch);
        Await.until(WAIT, "10 messages are consumed", () -> first.size() >= 10);
        before.close();

        BrokerMessage next = numbered("dev-1", 10);
        log.append(next).get(10, TimeUnit.SECONDS);
        List<PublishedRecord> second = new CopyOnWriteArrayList<>();
        consumer("node-1-restarted", second::add);
        Await.until(WAIT, "the new message is consumed", () -> !second.isEmpty());
        // Same publisher, same partition: any redelivered record would have come before this one.
        assertEquals(List.of(next), second.stream().map(PublishedRecord::message).toList());
    }

    @Test
    void theOwnershipListenerLearnsOfAssignmentAndOfTheEnd() {
        List<Set<Integer>> changes = new CopyOnWriteArrayList<>();
        PublishConsumer consumer = consumer("node-1", r -> { }, changes::add);
        Await.until(WAIT, "all partitions are assigned", () -> consumer.ownedPartitions().equals(Set.of(0, 1, 2, 3)));
        assertEquals(Set.of(0, 1, 2, 3), changes.get(changes.size() - 1));
        consumer.close();
        assertEquals(Set.of(), changes.get(changes.size() - 1));
    }

    @Test
    void closeIsIdempotentAndAllowedBeforeStart() {
        PublishConsumer never = new PublishConsumer(layout.clients("node-1"), registry, r -> { });
        never.close();
        never.close();
        assertThrows(IllegalStateException.class, never::start);

        PublishConsumer started = consumer("node-2", r -> { });
        assertThrows(IllegalStateException.class, started::start);
        started.close();
        started.close();
        assertFalse(started.isRunning());
    }
}
