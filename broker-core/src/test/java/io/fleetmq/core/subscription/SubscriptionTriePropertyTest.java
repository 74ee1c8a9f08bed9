package io.fleetmq.core.subscription;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.fleetmq.core.topic.TopicNames;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Compares the trie with the obvious implementation, {@link TopicNames#matches} over every
 * subscription, on random filters and topics drawn from a small alphabet so that they collide
 * often. The seed is fixed: a failure reproduces.
 */
class SubscriptionTriePropertyTest {

    private static final String[] LEVELS = {"a", "b", "$c", ""};
    private static final String[] GROUPS = {"g1", "g2"};

    static String randomTopic(Random random) {
        String topic;
        do {
            topic = randomLevels(random, false);
        } while (topic.isEmpty());
        return topic;
    }

    static String randomFilter(Random random) {
        String filter;
        do {
            filter = randomLevels(random, true);
        } while (filter.isEmpty());
        return filter;
    }

    private static String randomLevels(Random random, boolean wildcards) {
        int count = 1 + random.nextInt(4);
        List<String> levels = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (wildcards && random.nextInt(4) == 0) {
                levels.add("+");
            } else {
                levels.add(LEVELS[random.nextInt(LEVELS.length)]);
            }
        }
        if (wildcards && random.nextInt(4) == 0) {
            if (random.nextBoolean()) {
                levels.set(levels.size() - 1, "#");
            } else {
                levels.add("#");
            }
        }
        return String.join("/", levels);
    }

    static Subscription randomSubscription(Random random, String clientId) {
        String group = random.nextInt(4) == 0 ? GROUPS[random.nextInt(GROUPS.length)] : null;
        return new Subscription(clientId, randomFilter(random), group, random.nextInt(3), false,
                random.nextBoolean(), random.nextInt(3), random.nextInt(10), null);
    }

    /** The identity of a subscription within the trie: client, filter and share group. */
    static List<String> key(Subscription s) {
        return Arrays.asList(s.clientId(), s.topicFilter(), s.shareGroup());
    }

    /** What {@link SubscriptionTrie#match} must return, computed by brute force. */
    static Matches bruteForce(Collection<Subscription> subscriptions, String topic) {
        List<Subscription> direct = new ArrayList<>();
        Map<SharedGroupKey, List<Subscription>> shared = new HashMap<>();
        for (Subscription s : subscriptions) {
            if (!TopicNames.matches(s.topicFilter(), topic)) {
                continue;
            }
            if (s.isShared()) {
                shared.computeIfAbsent(new SharedGroupKey(s.shareGroup(), s.topicFilter()), k -> new ArrayList<>())
                        .add(s);
            } else {
                direct.add(s);
            }
        }
        return new Matches(direct, shared);
    }

    /** Compares ignoring order, but not ignoring duplicates. */
    static void assertSameMatches(Matches expected, Matches actual, String topic) {
        assertEquals(sorted(expected.direct()), sorted(actual.direct()), () -> "direct matches of " + topic);
        assertEquals(expected.shared().keySet(), actual.shared().keySet(), () -> "shared groups of " + topic);
        expected.shared().forEach((group, members) -> assertEquals(sorted(members),
                sorted(actual.shared().get(group)), () -> "members of " + group + " for " + topic));
    }

    /** Short descriptions, so that a failure message stays readable. */
    private static List<String> sorted(List<Subscription> subscriptions) {
        return subscriptions.stream()
                .map(s -> s.clientId() + " " + s.topicFilter() + " " + s.shareGroup() + " qos" + s.qos()
                        + " id" + s.subscriptionId())
                .sorted()
                .collect(Collectors.toList());
    }

    @Test
    void matchAgreesWithBruteForceOverRandomFiltersAndTopics() {
        Random random = new Random(20_240_601L);
        SubscriptionTrie trie = new SubscriptionTrie();
        Map<List<String>, Subscription> model = new HashMap<>();

        for (int i = 0; i < 3_000; i++) {
            Subscription s = randomSubscription(random, "c" + random.nextInt(40));
            // Same key means replace [MQTT-3.8.4-3]: the trie returns exactly what the model held.
            assertSame(model.put(key(s), s), trie.add(s));
        }
        assertEquals(model.size(), trie.size());
        checkAgainstModel(random, trie, model);

        List<List<String>> keys = new ArrayList<>(model.keySet());
        for (List<String> k : keys.subList(0, keys.size() / 3)) {
            assertSame(model.remove(k), trie.remove(k.get(0), k.get(1), k.get(2)));
        }
        for (int c = 0; c < 10; c++) {
            String clientId = "c" + c;
            Set<Subscription> expected = model.values().stream()
                    .filter(s -> s.clientId().equals(clientId)).collect(Collectors.toSet());
            assertEquals(expected, new HashSet<>(trie.removeClient(clientId)));
            model.values().removeAll(expected);
        }
        assertEquals(model.size(), trie.size());
        checkAgainstModel(random, trie, model);
    }

    private static void checkAgainstModel(Random random, SubscriptionTrie trie,
            Map<List<String>, Subscription> model) {
        for (int i = 0; i < 3_000; i++) {
            String topic = randomTopic(random);
            assertSameMatches(bruteForce(model.values(), topic), trie.match(topic), topic);
        }
        for (int c = 0; c < 40; c++) {
            String clientId = "c" + c;
            assertEquals(model.values().stream().filter(s -> s.clientId().equals(clientId))
                            .collect(Collectors.toSet()), new HashSet<>(trie.subscriptionsOf(clientId)));
        }
    }
}
