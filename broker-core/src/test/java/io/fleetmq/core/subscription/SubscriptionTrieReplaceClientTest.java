package io.fleetmq.core.subscription;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** A client's subscriptions replaced as a whole, as another node's record of them says. */
class SubscriptionTrieReplaceClientTest {

    private static Subscription sub(String clientId, String filter, String group, String node) {
        return new Subscription(clientId, filter, group, 1, false, false, 0, 0, node);
    }

    private static Set<String> filtersOf(SubscriptionTrie trie, String clientId) {
        return trie.subscriptionsOf(clientId).stream()
                .map(s -> (s.shareGroup() == null ? "" : "$share/" + s.shareGroup() + "/") + s.topicFilter() + "@"
                        + s.nodeId())
                .collect(Collectors.toSet());
    }

    @Test
    void theNewSetReplacesKeptFiltersAddsNewOnesAndDropsTheRest() {
        SubscriptionTrie trie = new SubscriptionTrie();
        trie.add(sub("other", "a/b", null, "n1"));
        assertEquals(List.of(), trie.replaceClient("c", List.of(sub("c", "a/b", null, "n1"), sub("c", "x/#", "g", "n1"))));
        assertEquals(Set.of("a/b@n1", "$share/g/x/#@n1"), filtersOf(trie, "c"));
        assertEquals(3, trie.size());

        List<Subscription> gone = trie.replaceClient("c", List.of(sub("c", "a/b", null, "n2"), sub("c", "y", null, "n2")));
        assertEquals(List.of(sub("c", "x/#", "g", "n1")), gone, "only the filter the client no longer has went");
        assertEquals(Set.of("a/b@n2", "y@n2"), filtersOf(trie, "c"));
        assertEquals(Set.of("other", "c"), trie.match("a/b").direct().stream().map(Subscription::clientId)
                .collect(Collectors.toSet()));
        assertTrue(trie.match("x/1").isEmpty());
        assertEquals(3, trie.size());

        assertEquals(2, trie.replaceClient("c", List.of()).size(), "an empty set removes the client");
        assertEquals(Set.of(), filtersOf(trie, "c"));
        assertEquals(1, trie.size());
        assertThrows(IllegalArgumentException.class, () -> trie.replaceClient("c", List.of(sub("d", "a", null, "n1"))));
    }

    /**
     * A router matching while a node applies the client's record again and again (its session moving
     * between nodes) always finds the client: it never sees the moment between removing the old
     * subscription and adding the new one.
     */
    @Test
    void aConcurrentMatchNeverFindsAClientWithoutTheFilterItKeeps() throws Exception {
        SubscriptionTrie trie = new SubscriptionTrie();
        trie.replaceClient("c", List.of(sub("c", "pairs/3", null, "n1")));
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicLong matched = new AtomicLong();
        AtomicLong missing = new AtomicLong();
        CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
            while (writing.get()) {
                boolean found = trie.match("pairs/3").direct().stream().anyMatch(s -> s.clientId().equals("c"));
                (found ? matched : missing).incrementAndGet();
            }
        });
        for (int i = 0; i < 200_000; i++) {
            String node = i % 2 == 0 ? "n2" : "n1";
            // Every other record also carries a second filter, which comes and goes.
            trie.replaceClient("c", i % 4 < 2 ? List.of(sub("c", "pairs/3", null, node))
                    : List.of(sub("c", "pairs/3", null, node), sub("c", "extra/+", null, node)));
        }
        writing.set(false);
        reader.get(30, TimeUnit.SECONDS);
        assertTrue(matched.get() > 0, "the reader ran");
        assertEquals(0, missing.get(), "matches that found no subscription of the client, of " + matched.get());
    }
}
