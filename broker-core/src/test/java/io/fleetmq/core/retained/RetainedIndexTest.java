package io.fleetmq.core.retained;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.TopicNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Values are the topic names themselves, so a result shows which topics matched. */
class RetainedIndexTest {

    private final RetainedIndex<String> index = new RetainedIndex<>();

    private void retain(String... topics) {
        for (String topic : topics) {
            index.put(topic, topic);
        }
    }

    private Set<String> matched(String filter) {
        List<String> found = index.match(filter);
        Set<String> distinct = new HashSet<>(found);
        assertEquals(found.size(), distinct.size(), () -> "duplicates in " + found);
        return distinct;
    }

    @Test
    void putGetRemoveAndSize() {
        assertNull(index.put("a/b", "first"));
        assertEquals("first", index.put("a/b", "second"));
        assertNull(index.put("a", "parent"));
        assertEquals(2, index.size());
        assertEquals("second", index.get("a/b"));
        assertEquals("parent", index.get("a"));
        assertNull(index.get("a/b/c"));
        assertNull(index.get("x"));

        assertEquals("second", index.remove("a/b"));
        assertNull(index.remove("a/b"));
        assertNull(index.remove("a/b/c"));
        assertEquals(1, index.size());
        assertEquals("parent", index.get("a"));
    }

    @Test
    void filterWithoutWildcardsFindsExactlyThatTopic() {
        retain("a/b", "a/b/", "/a/b", "A/b", "a");
        assertEquals(Set.of("a/b"), matched("a/b"));
        assertEquals(Set.of("a/b/"), matched("a/b/"));
        assertEquals(Set.of(), matched("a/c"));
    }

    @Test
    @DisplayName("4.7.1.2 '#' matches the parent level and any number of child levels")
    void multiLevelWildcard() {
        retain("sport", "sport/tennis/player1", "sport/tennis/player1/ranking",
                "sport/tennis/player1/score/wimbledon", "sports", "sport/");
        assertEquals(Set.of("sport/tennis/player1", "sport/tennis/player1/ranking",
                "sport/tennis/player1/score/wimbledon"), matched("sport/tennis/player1/#"));
        assertEquals(Set.of("sport", "sport/", "sport/tennis/player1", "sport/tennis/player1/ranking",
                "sport/tennis/player1/score/wimbledon"), matched("sport/#"));
        assertEquals(6, matched("#").size());
    }

    @Test
    @DisplayName("4.7.1.3 '+' matches exactly one level, empty levels included")
    void singleLevelWildcard() {
        retain("sport/tennis/player1", "sport/tennis/player2", "sport/tennis/player1/ranking", "sport",
                "sport/", "/finance", "a//c");
        assertEquals(Set.of("sport/tennis/player1", "sport/tennis/player2"), matched("sport/tennis/+"));
        assertEquals(Set.of("sport/"), matched("sport/+"));
        assertEquals(Set.of("/finance", "sport/"), matched("+/+"));
        assertEquals(Set.of("/finance"), matched("/+"));
        assertEquals(Set.of("sport"), matched("+"));
        assertEquals(Set.of("a//c"), matched("a/+/c"));
        assertEquals(Set.of("sport/tennis/player1/ranking"), matched("+/+/+/+"));
        assertEquals(Set.of("sport/tennis/player1", "sport/tennis/player2", "sport/tennis/player1/ranking"),
                matched("+/tennis/#"));
    }

    @Test
    @DisplayName("[MQTT-4.7.2-1] $SYS/... is not matched by '#' or '+/...', only by filters starting with '$'")
    void dollarTopics() {
        retain("$SYS/monitor/Clients", "$SYS", "monitor/Clients", "a/$SYS");
        assertEquals(Set.of("monitor/Clients", "a/$SYS"), matched("#"));
        assertEquals(Set.of("monitor/Clients"), matched("+/Clients"));
        assertEquals(Set.of(), matched("+/monitor/Clients"));
        assertEquals(Set.of(), matched("+"));
        assertEquals(Set.of("$SYS/monitor/Clients", "$SYS"), matched("$SYS/#"));
        assertEquals(Set.of("$SYS/monitor/Clients"), matched("$SYS/monitor/+"));
        assertEquals(Set.of("a/$SYS"), matched("a/+"));
    }

    @Test
    void invalidTopicsAndFiltersAreRejected() {
        assertThrows(InvalidTopicException.class, () -> index.put("a/+", "x"));
        assertThrows(InvalidTopicException.class, () -> index.put("", "x"));
        assertThrows(InvalidTopicException.class, () -> index.match("a/#/b"));
        assertThrows(NullPointerException.class, () -> index.put("a", null));
        assertEquals(0, index.size());
    }

    @Test
    void removingPrunesEmptyBranches() {
        retain("a/b/c", "a/b", "a/x/y/z", "/", "$SYS/x");
        // root; a, b, c; x, y, z under a; two empty levels; $SYS and x under it
        assertEquals(11, index.nodeCount());
        index.remove("a/b");
        assertEquals(11, index.nodeCount(), "a/b still leads to a/b/c");
        index.remove("a/b/c");
        assertEquals(9, index.nodeCount());
        index.remove("a/x/y/z");
        index.remove("/");
        index.remove("$SYS/x");
        assertEquals(0, index.size());
        assertEquals(1, index.nodeCount());
    }

    @Test
    void deepTopicsDoNotOverflowTheStack() {
        String deep = "x/".repeat(30_000) + "end";
        retain(deep);
        assertEquals(Set.of(deep), matched("#"));
        assertEquals(Set.of(deep), matched("+/".repeat(30_000) + "+"));
        assertEquals(Set.of(deep), matched(deep));
        index.remove(deep);
        assertEquals(1, index.nodeCount());
    }

    @Test
    void matchAgreesWithBruteForceOverRandomTopicsAndFilters() {
        Random random = new Random(42);
        Set<String> model = new HashSet<>();
        for (int i = 0; i < 1_500; i++) {
            String topic = randomTopic(random);
            index.put(topic, topic);
            model.add(topic);
        }
        for (int i = 0; i < 300; i++) {
            String topic = randomTopic(random);
            assertEquals(model.remove(topic) ? topic : null, index.remove(topic));
        }
        assertEquals(model.size(), index.size());
        for (int i = 0; i < 3_000; i++) {
            String filter = randomFilter(random);
            Set<String> expected = model.stream().filter(t -> TopicNames.matches(filter, t)).collect(Collectors.toSet());
            assertEquals(expected, matched(filter), filter);
        }
    }

    @Test
    void concurrentWriterAndReaders() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            CountDownLatch start = new CountDownLatch(1);
            AtomicBoolean writing = new AtomicBoolean(true);
            Future<Map<String, String>> writer = threads.submit(() -> {
                start.await();
                Random random = new Random(1);
                Map<String, String> model = new HashMap<>();
                for (int i = 0; i < 50_000; i++) {
                    String topic = randomTopic(random);
                    if (random.nextInt(3) == 0) {
                        assertEquals(model.remove(topic), index.remove(topic));
                    } else {
                        assertEquals(model.put(topic, topic), index.put(topic, topic));
                    }
                }
                return model;
            });
            List<Future<?>> readers = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                long seed = 100 + r;
                readers.add(threads.submit(() -> {
                    start.await();
                    Random random = new Random(seed);
                    while (writing.get()) {
                        String filter = randomFilter(random);
                        for (String topic : index.match(filter)) {
                            assertTrue(TopicNames.matches(filter, topic), () -> topic + " for " + filter);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            Map<String, String> model;
            try {
                model = writer.get(1, TimeUnit.MINUTES);
            } finally {
                writing.set(false);
            }
            for (Future<?> reader : readers) {
                reader.get(1, TimeUnit.MINUTES);
            }
            assertEquals(model.size(), index.size());
            for (String topic : model.keySet()) {
                assertEquals(topic, index.get(topic));
            }
            Set<String> all = new HashSet<>(index.match("#"));
            all.addAll(index.match("$c/#")); // '#' leaves out '$' topics, which all start with "$c"
            assertEquals(model.keySet(), all);
            model.keySet().forEach(index::remove);
            assertEquals(0, index.size());
            assertEquals(1, index.nodeCount());
        } finally {
            threads.shutdownNow();
            assertTrue(threads.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    private static final String[] LEVELS = {"a", "b", "$c", ""};

    private static String randomTopic(Random random) {
        String topic;
        do {
            int count = 1 + random.nextInt(4);
            List<String> levels = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                levels.add(LEVELS[random.nextInt(LEVELS.length)]);
            }
            topic = String.join("/", levels);
        } while (topic.isEmpty());
        return topic;
    }

    private static String randomFilter(Random random) {
        String filter;
        do {
            int count = 1 + random.nextInt(4);
            List<String> levels = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                levels.add(random.nextInt(4) == 0 ? "+" : LEVELS[random.nextInt(LEVELS.length)]);
            }
            if (random.nextInt(4) == 0) {
                levels.set(count - 1, "#");
            }
            filter = String.join("/", levels);
        } while (filter.isEmpty());
        return filter;
    }
}
