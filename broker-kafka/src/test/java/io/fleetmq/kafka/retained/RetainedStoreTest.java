package io.fleetmq.kafka.retained;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.message.UserProperty;
import io.fleetmq.kafka.publish.TestLayout;
import io.fleetmq.testkit.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The retained index of a node, rebuilt from the compacted {@code retained} topic of the embedded Kafka. */
class RetainedStoreTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private TestLayout layout;
    private SimpleMeterRegistry registry;
    private final List<RetainedStore> stores = new ArrayList<>();

    @BeforeEach
    void setUp() {
        layout = TestLayout.create(1);
        registry = new SimpleMeterRegistry();
    }

    @AfterEach
    void tearDown() {
        stores.forEach(RetainedStore::close);
    }

    private RetainedStore store(String node) {
        RetainedStore store = new RetainedStore(layout.clients(node), registry);
        stores.add(store);
        return store;
    }

    /** What a node's retained index holds after following the topic: topic -> latest message. */
    private static Map<String, BrokerMessage> load(RetainedStore store) {
        Map<String, BrokerMessage> index = new ConcurrentHashMap<>();
        store.loadAndFollow((topic, message) -> {
            if (message == null) {
                index.remove(topic);
            } else {
                index.put(topic, message);
            }
        });
        return index;
    }

    private static BrokerMessage retained(String topic, String payload) {
        return new BrokerMessage(topic, payload.getBytes(StandardCharsets.UTF_8), 1, true, "publisher-1",
                System.currentTimeMillis(), -1, 1, "text/plain", null, null, List.of(new UserProperty("v", payload)));
    }

    private static void await(CompletableFuture<Void> write) throws Exception {
        write.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aRestartedNodeLoadsExactlyTheLatestState() throws Exception {
        RetainedStore writer = store("node-1");
        await(writer.put(retained("home/temp", "20")));
        await(writer.put(retained("home/temp", "21")));   // replaces
        await(writer.put(retained("home/light", "on")));
        await(writer.delete("home/light"));                // deleted again
        await(writer.put(retained("home/door", "open")));
        BrokerMessage door = retained("home/door", "closed");
        await(writer.put(door));
        writer.close();

        Map<String, BrokerMessage> index = load(store("node-1-restarted"));

        assertEquals(Set.of("home/temp", "home/door"), index.keySet());
        assertArrayEquals("21".getBytes(StandardCharsets.UTF_8), index.get("home/temp").payload());
        assertEquals(door, index.get("home/door"));
    }

    @Test
    void followersLearnWhichPublishEachChangeCameFrom() throws Exception {
        RetainedStore writer = store("node-1");
        await(writer.put(retained("pos/a", "x"), new io.fleetmq.core.retained.LogPosition(3, 41)));
        await(writer.delete("pos/a", new io.fleetmq.core.retained.LogPosition(3, 42)));
        await(writer.put(retained("pos/b", "y")));
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        store("node-2").loadAndFollow((topic, message, from) ->
                seen.add(topic + (message == null ? " deleted" : " set") + " from " + from));
        assertEquals(List.of("pos/a set from 3@41", "pos/a deleted from 3@42", "pos/b set from null"), seen);
    }

    @Test
    void anEmptyPayloadDeletesTheRetainedMessage_MQTT_3_3_1_6_MQTT_3_3_1_7() throws Exception {
        RetainedStore writer = store("node-1");
        await(writer.put(retained("a/b", "x")));
        await(writer.put(BrokerMessage.of("a/b", new byte[0], 0, true, "publisher-1", System.currentTimeMillis())));

        assertEquals(Map.of(), load(store("node-2")));
        List<ConsumerRecord<String, byte[]>> records = layout.readAll(layout.topics().retained());
        assertNull(records.get(records.size() - 1).value(), "the last record for a/b is a tombstone");
    }

    @Test
    void deleteWritesATombstoneForTheTopic() throws Exception {
        RetainedStore writer = store("node-1");
        await(writer.put(retained("x/y", "1")));
        await(writer.delete("x/y"));

        List<ConsumerRecord<String, byte[]>> records = layout.readAll(layout.topics().retained());
        assertEquals(2, records.size());
        assertEquals("x/y", records.get(0).key());
        assertEquals(retained("x/y", "1").topic(), MessageCodec.decode(records.get(0).value()).topic());
        assertEquals("x/y", records.get(1).key());
        assertNull(records.get(1).value());
    }

    @Test
    void loadingReturnsOnlyWhenFiveThousandTopicsAreIndexed() throws Exception {
        RetainedStore writer = store("node-1");
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            writes.add(writer.put(retained("fleet/dev-" + i + "/state", "s" + i)));
        }
        CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        Map<String, BrokerMessage> index = load(store("node-2"));

        // No waiting here: loadAndFollow returning is the promise that the index is complete.
        assertEquals(5_000, index.size());
        assertArrayEquals("s4999".getBytes(StandardCharsets.UTF_8), index.get("fleet/dev-4999/state").payload());
    }

    @Test
    void anEmptyTopicLoadsAtOnceAndLaterChangesAreFollowed() throws Exception {
        RetainedStore node = store("node-1");
        Map<String, BrokerMessage> index = load(node);
        assertEquals(Map.of(), index);

        RetainedStore other = store("node-2");
        await(other.put(retained("late/topic", "1")));
        Await.until(WAIT, "node 1 learns of node 2's retained message", () -> index.containsKey("late/topic"));
        await(other.delete("late/topic"));
        Await.until(WAIT, "node 1 learns of the deletion", () -> !index.containsKey("late/topic"));
    }

    @Test
    void aMalformedRecordIsSkippedAndCounted() throws Exception {
        String topic = layout.topics().retained();
        layout.produceRaw(topic, "bad/value", new byte[] {9, 9, 9});
        layout.produceRaw(topic, "wrong/key", MessageCodec.encode(retained("other/topic", "1")));
        // (A record without a key cannot occur: Kafka refuses those on a compacted topic.)
        RetainedStore writer = store("node-1");
        await(writer.put(retained("good/topic", "1")));

        Map<String, BrokerMessage> index = load(store("node-2"));

        assertEquals(List.of("good/topic"), List.copyOf(index.keySet()));
        assertEquals(2, registry.get("fleetmq.messages.dropped").tag("reason", "malformed_record").counter().count());
        assertTrue(stores.get(1).failure().isEmpty());
    }

    @Test
    void aFailingListenerIsCountedAndLoadingCompletes() throws Exception {
        RetainedStore writer = store("node-1");
        await(writer.put(retained("boom", "1")));
        await(writer.put(retained("fine", "1")));
        List<String> seen = new ArrayList<>();
        store("node-2").loadAndFollow((topic, message) -> {
            if (topic.equals("boom")) {
                throw new IllegalStateException("index bug");
            }
            seen.add(topic);
        });
        assertEquals(List.of("fine"), seen);
        assertEquals(1, registry.get("fleetmq.messages.dropped").tag("reason", "handler_failed").counter().count());
    }

    @Test
    void loadingTwiceOrAfterCloseIsRefused() {
        RetainedStore store = store("node-1");
        load(store);
        assertThrows(IllegalStateException.class, () -> load(store));
        store.close();
        store.close();
        assertFalse(store.failure().isPresent());

        RetainedStore closed = store("node-2");
        closed.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> load(closed));
        assertEquals("retained store is closed", e.getMessage());
        ExecutionException late = assertThrows(ExecutionException.class,
                () -> closed.put(retained("a", "1")).get(1, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, late.getCause());
    }
}
