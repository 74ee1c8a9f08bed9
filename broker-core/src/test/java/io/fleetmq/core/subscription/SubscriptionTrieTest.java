package io.fleetmq.core.subscription;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SubscriptionTrieTest {

    private final SubscriptionTrie trie = new SubscriptionTrie();

    static Subscription direct(String clientId, String filter) {
        return direct(clientId, filter, 0);
    }

    static Subscription direct(String clientId, String filter, int qos) {
        return new Subscription(clientId, filter, null, qos, false, false, 0, 0, null);
    }

    static Subscription shared(String clientId, String group, String filter) {
        return new Subscription(clientId, filter, group, 1, false, false, 0, 0, "node-1");
    }

    /** The filters of the non-shared subscriptions that match, as a set. */
    private Set<String> matchedFilters(String topic) {
        return trie.match(topic).direct().stream().map(Subscription::topicFilter).collect(Collectors.toSet());
    }

    private void subscribeOneClientPerFilter(String... filters) {
        for (String filter : filters) {
            trie.add(direct("client-" + filter, filter));
        }
    }

    @Test
    void emptyTrieMatchesNothing() {
        assertTrue(trie.match("a/b").isEmpty());
        assertEquals(0, trie.size());
        assertEquals(1, trie.nodeCount());
    }

    @Test
    @DisplayName("4.7.1.2 '#' matches the parent level and any number of child levels")
    void multiLevelWildcard() {
        subscribeOneClientPerFilter("sport/tennis/player1/#", "sport/#", "#", "sport/tennis/#", "other/#");
        assertEquals(Set.of("sport/tennis/player1/#", "sport/#", "#", "sport/tennis/#"),
                matchedFilters("sport/tennis/player1"));
        assertEquals(Set.of("sport/tennis/player1/#", "sport/#", "#", "sport/tennis/#"),
                matchedFilters("sport/tennis/player1/score/wimbledon"));
        assertEquals(Set.of("sport/#", "#"), matchedFilters("sport"));
        assertEquals(Set.of("sport/#", "#"), matchedFilters("sport/"));
        assertEquals(Set.of("#"), matchedFilters("sports"));
    }

    @Test
    @DisplayName("4.7.1.3 '+' matches exactly one level, empty levels included")
    void singleLevelWildcard() {
        subscribeOneClientPerFilter("sport/tennis/+", "sport/+", "+", "+/+", "/+", "+/tennis/#", "a/+/c");
        assertEquals(Set.of("sport/tennis/+", "+/tennis/#"), matchedFilters("sport/tennis/player1"));
        assertEquals(Set.of("+/tennis/#"), matchedFilters("sport/tennis/player1/ranking"));
        assertEquals(Set.of("+/tennis/#"), matchedFilters("sport/tennis/player1/ranking/x/y"));
        assertEquals(Set.of("+"), matchedFilters("sport"));
        assertEquals(Set.of("sport/+", "+/+"), matchedFilters("sport/"));
        assertEquals(Set.of("+/+", "/+"), matchedFilters("/finance"));
        assertEquals(Set.of("a/+/c"), matchedFilters("a//c"));
    }

    @Test
    @DisplayName("[MQTT-4.7.2-1] filters starting with a wildcard do not match topics starting with '$'")
    void dollarTopics() {
        subscribeOneClientPerFilter("#", "+/monitor/Clients", "+", "+/#", "$SYS/#", "$SYS/monitor/+", "$SYS");
        assertEquals(Set.of("$SYS/#", "$SYS/monitor/+"), matchedFilters("$SYS/monitor/Clients"));
        assertEquals(Set.of("$SYS/#", "$SYS"), matchedFilters("$SYS"));
        assertEquals(Set.of("#", "+/monitor/Clients", "+/#"), matchedFilters("SYS/monitor/Clients"));
        assertEquals(Set.of("#", "+/#"), matchedFilters("a/$SYS"));
    }

    @Test
    void exactFiltersAreCaseSensitiveAndLevelExact() {
        subscribeOneClientPerFilter("a/b", "A/b", "a/b/", "/a/b");
        assertEquals(Set.of("a/b"), matchedFilters("a/b"));
        assertEquals(Set.of("a/b/"), matchedFilters("a/b/"));
        assertEquals(Set.of("/a/b"), matchedFilters("/a/b"));
        assertEquals(Set.of(), matchedFilters("a"));
    }

    @Test
    @DisplayName("[MQTT-3.3.4-2] overlapping subscriptions of one client each match; byClient groups them")
    void overlappingSubscriptionsOfOneClient() {
        Subscription exact = direct("c1", "a/b", 0);
        Subscription plus = direct("c1", "a/+", 1);
        Subscription hash = direct("c1", "a/#", 2);
        Subscription other = direct("c2", "a/b", 1);
        List.of(exact, plus, hash, other).forEach(trie::add);

        List<Subscription> matched = trie.match("a/b").direct();
        assertEquals(Set.of(exact, plus, hash, other), new HashSet<>(matched));
        assertEquals(4, matched.size());

        Map<String, List<Subscription>> byClient = Matches.byClient(matched);
        assertEquals(Set.of("c1", "c2"), byClient.keySet());
        assertEquals(Set.of(exact, plus, hash), new HashSet<>(byClient.get("c1")));
        assertEquals(List.of(other), byClient.get("c2"));
    }

    @Test
    void byClientKeepsTheOrderOfFirstAppearance() {
        List<Subscription> subscriptions = List.of(direct("b", "x"), direct("a", "x"), direct("b", "y"));
        assertEquals(List.of("b", "a"), List.copyOf(Matches.byClient(subscriptions).keySet()));
    }

    @Test
    @DisplayName("[MQTT-3.8.4-3] a subscription to an identical filter replaces the existing one")
    void addReplacesTheSameClientsSubscriptionToTheSameFilter() {
        Subscription first = direct("c1", "a/+", 0);
        Subscription second = direct("c1", "a/+", 2);
        assertNull(trie.add(first));
        assertSame(first, trie.add(second));
        assertEquals(1, trie.size());
        assertEquals(List.of(second), trie.match("a/x").direct());
        assertEquals(List.of(second), trie.subscriptionsOf("c1"));
    }

    @Test
    void sharedAndNonSharedSubscriptionsToTheSameFilterAreDistinct() {
        Subscription plain = direct("c1", "a/b");
        Subscription inGroupG = shared("c1", "g", "a/b");
        Subscription inGroupH = shared("c1", "h", "a/b");
        assertNull(trie.add(plain));
        assertNull(trie.add(inGroupG));
        assertNull(trie.add(inGroupH));
        assertEquals(3, trie.size());
        assertEquals(Set.of(plain, inGroupG, inGroupH), Set.copyOf(trie.subscriptionsOf("c1")));

        Subscription replacement = new Subscription("c1", "a/b", "g", 2, false, true, 1, 7, "node-2");
        assertSame(inGroupG, trie.add(replacement));
        assertEquals(3, trie.size());
    }

    @Test
    void sharedSubscriptionsAreGroupedByGroupAndFilter() {
        Subscription g1 = shared("c1", "g", "sport/+");
        Subscription g2 = shared("c2", "g", "sport/+");
        Subscription gOtherFilter = shared("c3", "g", "sport/#");
        Subscription h1 = shared("c1", "h", "sport/+");
        Subscription plain = direct("c4", "sport/tennis");
        List.of(g1, g2, gOtherFilter, h1, plain).forEach(trie::add);

        Matches matches = trie.match("sport/tennis");
        assertEquals(List.of(plain), matches.direct());
        assertEquals(Map.of(
                new SharedGroupKey("g", "sport/+"), Set.of(g1, g2),
                new SharedGroupKey("g", "sport/#"), Set.of(gOtherFilter),
                new SharedGroupKey("h", "sport/+"), Set.of(h1)),
                matches.shared().entrySet().stream()
                        .collect(Collectors.toMap(Map.Entry::getKey, e -> Set.copyOf(e.getValue()))));
    }

    @Test
    void sharedSubscriptionsFollowTheDollarRuleToo() {
        trie.add(shared("c1", "g", "#"));
        trie.add(shared("c2", "g", "$SYS/#"));
        assertEquals(Set.of(new SharedGroupKey("g", "$SYS/#")), trie.match("$SYS/x").shared().keySet());
    }

    @Test
    void removeReturnsTheRemovedSubscriptionOrNull() {
        Subscription plain = direct("c1", "a/b");
        Subscription inGroup = shared("c1", "g", "a/b");
        trie.add(plain);
        trie.add(inGroup);

        assertNull(trie.remove("c2", "a/b", null));
        assertNull(trie.remove("c1", "a/c", null));
        assertNull(trie.remove("c1", "a/b", "other-group"));
        assertSame(inGroup, trie.remove("c1", "a/b", "g"));
        assertNull(trie.remove("c1", "a/b", "g"));
        assertEquals(List.of(plain), trie.match("a/b").direct());
        assertTrue(trie.match("a/b").shared().isEmpty());
        assertSame(plain, trie.remove("c1", "a/b", null));
        assertTrue(trie.match("a/b").isEmpty());
        assertEquals(0, trie.size());
    }

    @Test
    void removeOfAnInvalidFilterFindsNothing() {
        trie.add(direct("c1", "a/#"));
        assertNull(trie.remove("c1", "a/#/b", null));
        assertEquals(1, trie.size());
    }

    @Test
    void removeClientRemovesAllOfItsSubscriptionsAndNoOneElses() {
        Subscription a = direct("c1", "a/#");
        Subscription b = direct("c1", "b");
        Subscription c = shared("c1", "g", "a/x");
        Subscription keep = direct("c2", "a/#");
        Subscription keepShared = shared("c2", "g", "a/x");
        List.of(a, b, c, keep, keepShared).forEach(trie::add);

        assertEquals(Set.of(a, b, c), Set.copyOf(trie.removeClient("c1")));
        assertEquals(List.of(), trie.subscriptionsOf("c1"));
        assertEquals(List.of(), trie.removeClient("c1"));
        assertEquals(2, trie.size());
        Matches matches = trie.match("a/x");
        assertEquals(List.of(keep), matches.direct());
        assertEquals(Map.of(new SharedGroupKey("g", "a/x"), List.of(keepShared)), matches.shared());
    }

    @Test
    void subscriptionsOfAnUnknownClientIsEmpty() {
        assertEquals(List.of(), trie.subscriptionsOf("nobody"));
    }

    @Test
    void emptyNodesArePrunedOnRemoval() {
        List<Subscription> all = List.of(
                direct("c1", "a/b/c"), direct("c2", "a/b/c"), direct("c1", "a/b"), direct("c1", "a/+/#"),
                shared("c3", "g", "a/b/c"), shared("c4", "g", "a/b/c"), direct("c1", "/"), direct("c1", "#"));
        all.forEach(trie::add);
        assertEquals(8, trie.size());
        // root, a, b, c, +, # under +, "" and "" under it, # at the root
        assertEquals(9, trie.nodeCount());

        trie.remove("c1", "a/b/c", null);
        assertEquals(9, trie.nodeCount(), "c2 and the group still hold a/b/c");
        trie.remove("c2", "a/b/c", null);
        trie.remove("c3", "a/b/c", "g");
        trie.remove("c4", "a/b/c", "g");
        assertEquals(8, trie.nodeCount(), "a/b/c is empty now, a/b still holds c1");
        trie.remove("c1", "a/+/#", null);
        assertEquals(6, trie.nodeCount());
        trie.removeClient("c1");

        assertEquals(0, trie.size());
        assertEquals(1, trie.nodeCount());
        assertTrue(trie.match("a/b/c").isEmpty());
    }

    @Test
    void churnDoesNotGrowTheTrie() {
        for (int round = 0; round < 50; round++) {
            for (int i = 0; i < 100; i++) {
                trie.add(direct("c" + i, "devices/" + round + "/" + i + "/cmd"));
                trie.add(shared("c" + i, "g" + (i % 3), "devices/+/" + i + "/#"));
            }
            for (int i = 0; i < 100; i++) {
                trie.removeClient("c" + i);
            }
        }
        assertEquals(0, trie.size());
        assertEquals(1, trie.nodeCount());
    }

    @Test
    void deepTopicsAndFiltersDoNotOverflowTheStack() {
        int depth = 30_000;
        String topic = "x/".repeat(depth) + "end";
        trie.add(direct("c1", "x/".repeat(depth) + "end"));
        trie.add(direct("c2", "+/".repeat(depth) + "+"));
        trie.add(direct("c3", "x/".repeat(depth / 2) + "#"));
        trie.add(direct("c4", "+/".repeat(depth) + "other"));

        assertEquals(Set.of("c1", "c2", "c3"),
                trie.match(topic).direct().stream().map(Subscription::clientId).collect(Collectors.toSet()));
        trie.removeClient("c1");
        trie.removeClient("c2");
        trie.removeClient("c3");
        trie.removeClient("c4");
        assertEquals(1, trie.nodeCount());
    }

    @Test
    void matchesAreImmutable() {
        trie.add(direct("c1", "a"));
        trie.add(shared("c2", "g", "a"));
        Matches matches = trie.match("a");
        assertThrows(UnsupportedOperationException.class, () -> matches.direct().clear());
        assertThrows(UnsupportedOperationException.class, () -> matches.shared().clear());
        assertThrows(UnsupportedOperationException.class,
                () -> matches.shared().values().iterator().next().clear());
    }
}
