package io.fleetmq.core.subscription;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A node holds its one non-shared subscriber in a field, and moves to a map when a second client
 * subscribes to the same filter. The move must never hide the first subscriber from a match running
 * at the same time.
 */
class SubscriptionTrieSingleSubscriberTest {

    private static Subscription sub(String clientId, String filter, int qos) {
        return new Subscription(clientId, filter, null, qos, false, false, 0, 0, null);
    }

    @Test
    void oneSubscriberThenTwoThenNone() {
        SubscriptionTrie trie = new SubscriptionTrie();
        Subscription a = sub("a", "t/1", 0);
        assertNull(trie.add(a));
        Subscription a1 = sub("a", "t/1", 1);
        assertSame(a, trie.add(a1), "the same client replaces its subscription");
        assertEquals(List.of(a1), trie.match("t/1").direct());
        Subscription b = sub("b", "t/1", 0);
        assertNull(trie.add(b));
        assertEquals(2, trie.match("t/1").direct().size());
        assertSame(a1, trie.remove("a", "t/1", null));
        assertEquals(List.of(b), trie.match("t/1").direct());
        assertSame(b, trie.remove("b", "t/1", null));
        assertTrue(trie.match("t/1").direct().isEmpty());
        assertEquals(0, trie.size());
        assertEquals(1, trie.nodeCount(), "the emptied nodes are pruned");
        assertNull(trie.remove("b", "t/1", null));
    }

    /** The client index holds a client's one subscription itself, and a map from the second on. */
    @Test
    void aClientsSubscriptionsAreIndexedAsOneThenSeveral() {
        SubscriptionTrie trie = new SubscriptionTrie();
        Subscription a = sub("c", "a/#", 0);
        trie.add(a);
        assertEquals(List.of(a), trie.subscriptionsOf("c"));
        assertNull(trie.remove("c", "a/#", "group"), "another share group is another subscription");
        assertNull(trie.remove("c", "a/+", null));
        Subscription a1 = sub("c", "a/#", 1);
        assertSame(a, trie.add(a1));
        assertEquals(List.of(a1), trie.subscriptionsOf("c"));
        Subscription shared = new Subscription("c", "a/#", "group", 1, false, false, 0, 0, null);
        Subscription b = sub("c", "b", 2);
        trie.add(shared);
        trie.add(b);
        assertEquals(java.util.Set.of(a1, shared, b), new java.util.HashSet<>(trie.subscriptionsOf("c")));
        assertEquals(3, trie.size());
        assertSame(a1, trie.remove("c", "a/#", null));
        assertSame(shared, trie.remove("c", "a/#", "group"));
        assertEquals(List.of(b), trie.subscriptionsOf("c"));
        assertEquals(List.of(b), trie.removeClient("c"));
        assertEquals(List.of(), trie.subscriptionsOf("c"));
        assertEquals(List.of(), trie.removeClient("c"));
        assertEquals(0, trie.size());
        assertEquals(1, trie.nodeCount());
    }

    @Test
    void aSecondSubscriberNeverHidesTheFirstFromAConcurrentMatch() throws Exception {
        int filters = 20_000;
        SubscriptionTrie trie = new SubscriptionTrie();
        for (int i = 0; i < filters; i++) {
            trie.add(sub("stable", "t/" + i, 1));
        }
        AtomicInteger current = new AtomicInteger();
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicLong matches = new AtomicLong();
        ExecutorService threads = Executors.newFixedThreadPool(3);
        try {
            Future<?> writer = threads.submit(() -> {
                for (int i = 0; i < filters; i++) {
                    current.set(i);
                    trie.add(sub("second", "t/" + i, 1)); // the node moves from its field to a map
                }
                writing.set(false);
                return null;
            });
            java.util.concurrent.Callable<Void> reader = () -> {
                while (writing.get()) {
                    int i = current.get();
                    List<Subscription> found = trie.match("t/" + i).direct();
                    matches.incrementAndGet();
                    if (found.stream().noneMatch(s -> s.clientId().equals("stable"))) {
                        throw new AssertionError("t/" + i + " matched " + found + " without its first subscriber");
                    }
                }
                return null;
            };
            List<Future<Void>> readers = List.of(threads.submit(reader), threads.submit(reader));
            writer.get(1, TimeUnit.MINUTES);
            for (Future<Void> r : readers) {
                r.get(1, TimeUnit.MINUTES);
            }
        } finally {
            threads.shutdownNow();
        }
        assertTrue(matches.get() > 0);
        assertEquals(2 * filters, trie.size());
        assertEquals(2, trie.match("t/" + (filters - 1)).direct().size());
    }
}
