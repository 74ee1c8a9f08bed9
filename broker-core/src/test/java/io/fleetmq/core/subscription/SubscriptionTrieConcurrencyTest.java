package io.fleetmq.core.subscription;

import static io.fleetmq.core.subscription.SubscriptionTriePropertyTest.assertSameMatches;
import static io.fleetmq.core.subscription.SubscriptionTriePropertyTest.bruteForce;
import static io.fleetmq.core.subscription.SubscriptionTriePropertyTest.key;
import static io.fleetmq.core.subscription.SubscriptionTriePropertyTest.randomSubscription;
import static io.fleetmq.core.subscription.SubscriptionTriePropertyTest.randomTopic;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Writers subscribe, replace and unsubscribe while readers match. Each writer owns its clients,
 * so it can keep an exact model of them; the readers check what must hold at every instant, and
 * the end state is compared with the union of the models.
 */
class SubscriptionTrieConcurrencyTest {

    private static final int WRITERS = 4;
    private static final int READERS = 4;
    private static final int CLIENTS_PER_WRITER = 10;
    private static final int OPERATIONS_PER_WRITER = 20_000;

    private final ExecutorService threads = Executors.newFixedThreadPool(WRITERS + READERS);

    @AfterEach
    void stopThreads() throws InterruptedException {
        threads.shutdownNow();
        assertTrue(threads.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void concurrentWritersAndReadersLeaveAConsistentTrie() throws Exception {
        SubscriptionTrie trie = new SubscriptionTrie();
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicLong matchesChecked = new AtomicLong();

        List<Future<Map<List<String>, Subscription>>> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            writers.add(threads.submit(() -> {
                start.await();
                return write(trie, writer);
            }));
        }
        List<Future<?>> readers = new ArrayList<>();
        for (int r = 0; r < READERS; r++) {
            long seed = 1_000 + r;
            readers.add(threads.submit(() -> {
                start.await();
                Random random = new Random(seed);
                while (writing.get()) {
                    String topic = randomTopic(random);
                    checkInvariants(topic, trie.match(topic));
                    matchesChecked.incrementAndGet();
                }
                return null;
            }));
        }

        start.countDown();
        Map<List<String>, Subscription> model = new HashMap<>();
        try {
            for (Future<Map<List<String>, Subscription>> writer : writers) {
                model.putAll(writer.get(2, TimeUnit.MINUTES)); // rethrows a writer's failure
            }
        } finally {
            writing.set(false);
        }
        for (Future<?> reader : readers) {
            reader.get(1, TimeUnit.MINUTES); // rethrows a reader's failure
        }
        assertTrue(matchesChecked.get() > 0);

        assertEquals(model.size(), trie.size());
        Random random = new Random(7);
        for (int i = 0; i < 2_000; i++) {
            String topic = randomTopic(random);
            assertSameMatches(bruteForce(model.values(), topic), trie.match(topic), topic);
        }
        for (int w = 0; w < WRITERS; w++) {
            for (int c = 0; c < CLIENTS_PER_WRITER; c++) {
                String clientId = clientId(w, c);
                Set<Subscription> expected = new HashSet<>();
                model.values().stream().filter(s -> s.clientId().equals(clientId)).forEach(expected::add);
                assertEquals(expected, new HashSet<>(trie.subscriptionsOf(clientId)));
                assertEquals(expected, new HashSet<>(trie.removeClient(clientId)));
            }
        }
        assertEquals(0, trie.size());
        assertEquals(1, trie.nodeCount());
    }

    private static String clientId(int writer, int client) {
        return "w" + writer + "-c" + client;
    }

    /** Random adds (often replacing), removes and client removals, checked against a model. */
    private static Map<List<String>, Subscription> write(SubscriptionTrie trie, int writer) {
        Random random = new Random(writer);
        Map<List<String>, Subscription> model = new HashMap<>();
        for (int i = 0; i < OPERATIONS_PER_WRITER; i++) {
            String clientId = clientId(writer, random.nextInt(CLIENTS_PER_WRITER));
            int operation = random.nextInt(10);
            if (operation < 6) {
                Subscription s = randomSubscription(random, clientId);
                assertSame(model.put(key(s), s), trie.add(s));
            } else if (operation < 9) {
                List<Subscription> ofClient = model.values().stream()
                        .filter(s -> s.clientId().equals(clientId)).toList();
                if (!ofClient.isEmpty()) {
                    Subscription s = ofClient.get(random.nextInt(ofClient.size()));
                    assertSame(model.remove(key(s)), trie.remove(clientId, s.topicFilter(), s.shareGroup()));
                }
            } else {
                Set<Subscription> expected = new HashSet<>();
                model.values().removeIf(s -> s.clientId().equals(clientId) && expected.add(s));
                assertEquals(expected, new HashSet<>(trie.removeClient(clientId)));
            }
        }
        return model;
    }

    /**
     * What every match must satisfy however writes interleave: everything returned matches, and
     * no subscription appears twice, which a torn replace (old and new both visible) would cause.
     */
    private static void checkInvariants(String topic, Matches matches) {
        Set<List<String>> seen = new HashSet<>();
        for (Subscription s : matches.direct()) {
            assertTrue(!s.isShared() && TopicNames.matches(s.topicFilter(), topic), () -> s + " for " + topic);
            assertTrue(seen.add(key(s)), () -> "twice: " + s);
        }
        matches.shared().forEach((group, members) -> {
            assertTrue(!members.isEmpty(), () -> "empty group " + group);
            for (Subscription s : members) {
                assertEquals(group, new SharedGroupKey(s.shareGroup(), s.topicFilter()));
                assertTrue(TopicNames.matches(s.topicFilter(), topic), () -> s + " for " + topic);
                assertTrue(seen.add(key(s)), () -> "twice: " + s);
            }
        });
    }
}
