package io.fleetmq.core.subscription;

import io.fleetmq.core.topic.TopicNames;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * All subscriptions the node knows, arranged by topic level so that matching a published topic
 * costs its number of levels times the wildcard branching, however many subscriptions there are.
 *
 * <p>Concurrency: publish threads match far more often than sessions subscribe, so reads take no
 * lock. Every node keeps its children and subscriptions in {@link ConcurrentHashMap}s, which
 * readers walk while writers change them; a {@link Subscription} is immutable, and replacing one
 * is a single {@code put} on the map of its node, so a reader sees the old or the new, never both
 * and never a half-built one. Writers take one lock among themselves. That makes pruning safe (no
 * writer can add to a node while another detaches it as empty) and keeps the client index in step
 * with the trie; a write holds the lock for a few map operations per level, which is far from
 * being a bottleneck at subscribe rates.
 *
 * <p>A match is not a snapshot: a subscription added or removed while it runs may or may not be
 * in its result, and of a client's subscriptions being removed one by one it may see some.
 * Everything it returns was subscribed at some moment during the call.
 *
 * <p>Nodes that lose their last subscription and child are removed, so memory follows the live
 * subscriptions, not their history; maps in a node are created only when needed, because most
 * nodes are leaves with one subscriber (a device's own command topic), which a node holds in a
 * field of its own rather than in a map.
 */
public final class SubscriptionTrie {

    private static final String SINGLE_LEVEL = String.valueOf(TopicNames.SINGLE_LEVEL);
    private static final String MULTI_LEVEL = String.valueOf(TopicNames.MULTI_LEVEL);

    private final Node root = new Node();
    private final Object writeLock = new Object();
    /**
     * Each client's subscriptions, so that removing a client does not scan the trie: its one
     * {@link Subscription} itself while it has one (most clients), a map by {@link FilterKey} from
     * the second on. Written under {@link #writeLock}; a value is never changed in place while it is
     * a single subscription, only replaced.
     */
    private final ConcurrentHashMap<String, Object> byClient = new ConcurrentHashMap<>();
    /** Written under {@link #writeLock} only. */
    private volatile int size;

    /**
     * Adds the subscription, or replaces the one the same client has for the same filter and share
     * group [MQTT-3.8.4-3].
     *
     * @return the replaced subscription, or {@code null} if there was none
     */
    public Subscription add(Subscription subscription) {
        Objects.requireNonNull(subscription, "subscription");
        String[] levels = TopicNames.levels(subscription.topicFilter());
        synchronized (writeLock) {
            Node node = root;
            for (String level : levels) {
                node = node.childForWrite(level);
            }
            Subscription replaced = node.put(subscription);
            index(subscription);
            if (replaced == null) {
                size++;
            }
            return replaced;
        }
    }

    /**
     * Removes one subscription of a client.
     *
     * @param topicFilter the filter without any {@code $share/group/} prefix
     * @param shareGroup  the share group, {@code null} for a non-shared subscription
     * @return the removed subscription, or {@code null} if the client had no such subscription
     */
    public Subscription remove(String clientId, String topicFilter, String shareGroup) {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(topicFilter, "topicFilter");
        synchronized (writeLock) {
            Object held = byClient.get(clientId);
            Subscription removed;
            if (held instanceof Subscription one) {
                if (!one.topicFilter().equals(topicFilter) || !Objects.equals(one.shareGroup(), shareGroup)) {
                    return null;
                }
                removed = one;
                byClient.remove(clientId);
            } else if (held != null) {
                Map<FilterKey, Subscription> ofClient = asMap(held);
                removed = ofClient.remove(new FilterKey(topicFilter, shareGroup));
                if (removed == null) {
                    return null;
                }
                if (ofClient.isEmpty()) {
                    byClient.remove(clientId);
                }
            } else {
                return null;
            }
            detach(removed);
            size--;
            return removed;
        }
    }

    /** Removes all subscriptions of a client, e.g. when its session ends. */
    public List<Subscription> removeClient(String clientId) {
        Objects.requireNonNull(clientId, "clientId");
        synchronized (writeLock) {
            List<Subscription> removed = subscriptionsIn(byClient.remove(clientId));
            for (Subscription subscription : removed) {
                detach(subscription);
            }
            size -= removed.size();
            return removed;
        }
    }

    /**
     * Makes {@code now} the client's subscriptions, as another node's record of them says. A
     * subscription with a filter (and share group) the client had already replaces the old one in a
     * single write, and only then do the filters it no longer has go, so a concurrent
     * {@link #match} sees the old subscription or the new one for a filter the client keeps, never
     * neither: removing the client first and adding it back would let a message routed in between
     * find no subscriber and go nowhere.
     *
     * @param now the client's subscriptions, all of {@code clientId}; empty removes the client
     * @return the subscriptions that went (not those replaced)
     */
    public List<Subscription> replaceClient(String clientId, List<Subscription> now) {
        Objects.requireNonNull(clientId, "clientId");
        java.util.Set<FilterKey> kept = new java.util.HashSet<>();
        for (Subscription s : now) {
            if (!s.clientId().equals(clientId)) {
                throw new IllegalArgumentException("subscription of " + s.clientId() + " given for " + clientId);
            }
            kept.add(FilterKey.of(s));
        }
        synchronized (writeLock) {
            List<Subscription> before = subscriptionsIn(byClient.get(clientId));
            now.forEach(this::add);
            List<Subscription> gone = new ArrayList<>();
            for (Subscription old : before) {
                if (!kept.contains(FilterKey.of(old))) {
                    gone.add(remove(clientId, old.topicFilter(), old.shareGroup())); // held under the lock: present
                }
            }
            return gone;
        }
    }

    /** The client's subscriptions, in no particular order. */
    public List<Subscription> subscriptionsOf(String clientId) {
        return subscriptionsIn(byClient.get(clientId));
    }

    /** Records the subscription in its client's entry of {@link #byClient}. Under the lock. */
    private void index(Subscription subscription) {
        String clientId = subscription.clientId();
        Object held = byClient.get(clientId);
        if (held == null) {
            byClient.put(clientId, subscription);
        } else if (held instanceof Subscription one) {
            if (one.topicFilter().equals(subscription.topicFilter())
                    && Objects.equals(one.shareGroup(), subscription.shareGroup())) {
                byClient.put(clientId, subscription); // replaces it [MQTT-3.8.4-3]
            } else {
                ConcurrentHashMap<FilterKey, Subscription> two = new ConcurrentHashMap<>(4);
                two.put(FilterKey.of(one), one);
                two.put(FilterKey.of(subscription), subscription);
                byClient.put(clientId, two);
            }
        } else {
            asMap(held).put(FilterKey.of(subscription), subscription);
        }
    }

    /** The subscriptions of an entry of {@link #byClient}; none for null. */
    private static List<Subscription> subscriptionsIn(Object held) {
        if (held == null) {
            return List.of();
        }
        return held instanceof Subscription one ? List.of(one) : List.copyOf(asMap(held).values());
    }

    @SuppressWarnings("unchecked")
    private static Map<FilterKey, Subscription> asMap(Object held) {
        return (Map<FilterKey, Subscription>) held;
    }

    /** Number of subscriptions, shared ones included. */
    public int size() {
        return size;
    }

    /**
     * The subscriptions whose filter matches a topic name, with the semantics of
     * {@link TopicNames#matches}. Takes no lock.
     *
     * @param topicName a valid topic name (see {@link TopicNames#validateTopicName}); for a name
     *     containing wildcards the result is unspecified
     */
    public Matches match(String topicName) {
        String[] levels = TopicNames.levels(topicName);
        // [MQTT-4.7.2-1] A filter starting with a wildcard never matches a topic starting with '$'.
        boolean wildcardsAtFirstLevel = !topicName.startsWith("$");
        List<Subscription> direct = new ArrayList<>();
        Map<SharedGroupKey, List<Subscription>> shared = new HashMap<>();

        // Breadth-first, one level at a time, rather than recursively: a topic of 64 KiB can have
        // 32k levels, too deep for the stack.
        List<Node> current = new ArrayList<>();
        List<Node> next = new ArrayList<>();
        current.add(root);
        for (int i = 0; i < levels.length && !current.isEmpty(); i++) {
            boolean wildcards = i > 0 || wildcardsAtFirstLevel;
            for (Node node : current) {
                if (wildcards) {
                    collect(node.child(MULTI_LEVEL), direct, shared); // '#' takes all remaining levels
                    addIfPresent(next, node.child(SINGLE_LEVEL));
                }
                addIfPresent(next, node.child(levels[i]));
            }
            List<Node> matched = current;
            current = next;
            next = matched;
            next.clear();
        }
        for (Node node : current) {
            collect(node, direct, shared);
            // '#' also matches its parent level: "sport/#" matches "sport".
            collect(node.child(MULTI_LEVEL), direct, shared);
        }
        return direct.isEmpty() && shared.isEmpty() ? Matches.none() : new Matches(direct, shared);
    }

    /** Number of trie nodes including the root: 1 when empty, which is what pruning guarantees. */
    int nodeCount() {
        int count = 0;
        Deque<Node> pending = new ArrayDeque<>();
        pending.push(root);
        while (!pending.isEmpty()) {
            Node node = pending.pop();
            count++;
            Map<String, Node> children = node.children;
            if (children != null) {
                children.values().forEach(pending::push);
            }
        }
        return count;
    }

    /** Removes the subscription from its node and prunes the nodes left empty. Under the lock. */
    private void detach(Subscription subscription) {
        String[] levels = TopicNames.levels(subscription.topicFilter());
        Node[] path = new Node[levels.length + 1];
        path[0] = root;
        for (int i = 0; i < levels.length; i++) {
            // Present: the client index holds the subscription, so its path exists.
            path[i + 1] = path[i].child(levels[i]);
        }
        path[levels.length].remove(subscription);
        for (int i = levels.length; i > 0 && path[i].isEmpty(); i--) {
            path[i - 1].removeChild(levels[i - 1]);
        }
    }

    private static void addIfPresent(List<Node> nodes, Node node) {
        if (node != null) {
            nodes.add(node);
        }
    }

    private static void collect(Node node, List<Subscription> direct,
            Map<SharedGroupKey, List<Subscription>> shared) {
        if (node == null) {
            return;
        }
        // The single subscriber first, then the map: a writer that turns one into the other fills the
        // map (with the single one in it) before it clears the field, so one of the two has it.
        Subscription single = node.single;
        Map<String, Subscription> directHere = node.direct;
        if (directHere != null) {
            addDistinct(directHere, direct);
        } else if (single != null) {
            direct.add(single);
        }
        Map<String, ConcurrentHashMap<String, Subscription>> sharedHere = node.shared;
        if (sharedHere != null) {
            for (Map.Entry<String, ConcurrentHashMap<String, Subscription>> group : sharedHere.entrySet()) {
                List<Subscription> members = new ArrayList<>(2);
                addDistinct(group.getValue(), members);
                if (!members.isEmpty()) { // its last member may just have left
                    // All members of a node's group share the filter; any of them can name it.
                    shared.put(new SharedGroupKey(group.getKey(), members.get(0).topicFilter()), members);
                }
            }
        }
    }

    /**
     * Adds the subscriptions of one node's map (by client ID) to {@code into}, each client once. A
     * {@link ConcurrentHashMap} iteration can return a key twice when a writer removes it and puts
     * it back meanwhile while the table grows (a client unsubscribing and subscribing again, as a
     * reconnecting clean session does); the client would then get the message twice. Checked only
     * when the map gave two or more, so the common node of one subscriber costs nothing more.
     */
    private static void addDistinct(Map<String, Subscription> byClientId, List<Subscription> into) {
        int from = into.size();
        into.addAll(byClientId.values());
        if (into.size() - from < 2) {
            return;
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        int kept = from;
        for (int i = from; i < into.size(); i++) {
            Subscription s = into.get(i);
            if (seen.add(s.clientId())) {
                into.set(kept++, s);
            }
        }
        into.subList(kept, into.size()).clear();
    }

    /** What makes a subscription unique within one client's session. */
    private record FilterKey(String topicFilter, String shareGroup) {
        static FilterKey of(Subscription subscription) {
            return new FilterKey(subscription.topicFilter(), subscription.shareGroup());
        }
    }

    /**
     * One topic level. Readers use the fields without locking; writers change them only under the
     * trie's write lock. Each map is created when its first entry arrives and dropped when its
     * last one leaves, so a node that is null everywhere is empty and can be pruned.
     */
    private static final class Node {
        /** Child nodes by level; the wildcards are the levels "+" and "#". */
        volatile ConcurrentHashMap<String, Node> children;
        /**
         * The one non-shared subscription ending here while there is just one, which is most nodes
         * (a device's own topic): a map of one entry would cost more than the subscription. Null
         * once {@link #direct} holds them.
         */
        volatile Subscription single;
        /** Non-shared subscriptions ending here, by client ID, once two clients have subscribed. */
        volatile ConcurrentHashMap<String, Subscription> direct;
        /** Shared subscriptions ending here, by share group, then by client ID. */
        volatile ConcurrentHashMap<String, ConcurrentHashMap<String, Subscription>> shared;

        Node child(String level) {
            Map<String, Node> current = children;
            return current == null ? null : current.get(level);
        }

        Node childForWrite(String level) {
            if (children == null) {
                children = new ConcurrentHashMap<>(1);
            }
            return children.computeIfAbsent(level, l -> new Node());
        }

        void removeChild(String level) {
            children.remove(level);
            if (children.isEmpty()) {
                children = null;
            }
        }

        Subscription put(Subscription subscription) {
            if (!subscription.isShared()) {
                if (direct != null) {
                    return direct.put(subscription.clientId(), subscription);
                }
                Subscription one = single;
                if (one == null || one.clientId().equals(subscription.clientId())) {
                    single = subscription; // a replacement is one write: readers see the old or the new
                    return one;
                }
                ConcurrentHashMap<String, Subscription> both = new ConcurrentHashMap<>(4);
                both.put(one.clientId(), one);
                both.put(subscription.clientId(), subscription);
                direct = both; // before the field is cleared, see collect()
                single = null;
                return null;
            }
            if (shared == null) {
                shared = new ConcurrentHashMap<>(1);
            }
            return shared.computeIfAbsent(subscription.shareGroup(), g -> new ConcurrentHashMap<>(4))
                    .put(subscription.clientId(), subscription);
        }

        void remove(Subscription subscription) {
            if (!subscription.isShared()) {
                if (direct == null) {
                    Subscription one = single;
                    if (one != null && one.clientId().equals(subscription.clientId())) {
                        single = null;
                    }
                    return;
                }
                direct.remove(subscription.clientId());
                if (direct.isEmpty()) {
                    direct = null;
                }
                return;
            }
            Map<String, Subscription> members = shared.get(subscription.shareGroup());
            members.remove(subscription.clientId());
            if (members.isEmpty()) {
                shared.remove(subscription.shareGroup());
                if (shared.isEmpty()) {
                    shared = null;
                }
            }
        }

        boolean isEmpty() {
            return children == null && single == null && direct == null && shared == null;
        }
    }
}
