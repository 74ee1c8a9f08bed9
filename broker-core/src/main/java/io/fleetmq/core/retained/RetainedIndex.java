package io.fleetmq.core.retained;

import io.fleetmq.core.topic.TopicNames;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The retained message of every topic that has one, found by topic name or by the topic filter of
 * a new subscription (MQTT 5.0 section 3.3.1.3). Topics are kept in a tree of levels: a filter
 * without wildcards is one walk down the tree, and a wildcard filter only visits the branches it
 * can match.
 *
 * <p>Concurrency is that of the subscription trie: a single writer lock, held by whoever applies
 * the {@code retained} state topic, and lock-free readers (the client actors answering SUBSCRIBE)
 * that walk {@link ConcurrentHashMap}s and see each value either before or after a change.
 * Branches left empty by a removal are pruned.
 *
 * <p>The index does not interpret values: a PUBLISH with an empty retained payload deletes the
 * topic's retained message [MQTT-3.3.1-6], and the caller turns it into {@link #remove}.
 *
 * @param <T> the retained message, typically carrying its own topic name
 */
public final class RetainedIndex<T> {

    private static final String SINGLE_LEVEL = String.valueOf(TopicNames.SINGLE_LEVEL);
    private static final String MULTI_LEVEL = String.valueOf(TopicNames.MULTI_LEVEL);

    private final Node<T> root = new Node<>();
    private final Object writeLock = new Object();
    /** Written under {@link #writeLock} only. */
    private volatile int size;

    /**
     * Stores the topic's retained message, replacing the previous one.
     *
     * @return the replaced value, or {@code null}
     * @throws io.fleetmq.core.topic.InvalidTopicException if the topic is not a valid topic name
     */
    public T put(String topic, T value) {
        TopicNames.validateTopicName(topic);
        Objects.requireNonNull(value, "value");
        synchronized (writeLock) {
            Node<T> node = root;
            for (String level : TopicNames.levels(topic)) {
                node = node.childForWrite(level);
            }
            T replaced = node.value;
            node.value = value;
            if (replaced == null) {
                size++;
            }
            return replaced;
        }
    }

    /** @return the removed value, or {@code null} if the topic had none */
    public T remove(String topic) {
        Objects.requireNonNull(topic, "topic");
        String[] levels = TopicNames.levels(topic);
        synchronized (writeLock) {
            List<Node<T>> path = new ArrayList<>(levels.length + 1);
            Node<T> node = root;
            path.add(node);
            for (String level : levels) {
                node = node.child(level);
                if (node == null) {
                    return null;
                }
                path.add(node);
            }
            T removed = node.value;
            if (removed == null) {
                return null;
            }
            node.value = null;
            size--;
            for (int i = levels.length; i > 0 && path.get(i).isEmpty(); i--) {
                path.get(i - 1).removeChild(levels[i - 1]);
            }
            return removed;
        }
    }

    /** The topic's retained message, or {@code null}. One walk down the tree, no scan. */
    public T get(String topic) {
        Node<T> node = root;
        for (String level : TopicNames.levels(topic)) {
            node = node.child(level);
            if (node == null) {
                return null;
            }
        }
        return node.value;
    }

    /**
     * The retained messages of all topics the filter matches, with the semantics of
     * {@link TopicNames#matches}, in no particular order.
     *
     * @throws io.fleetmq.core.topic.InvalidTopicException if the filter is not a valid filter
     */
    public List<T> match(String topicFilter) {
        TopicNames.validateTopicFilter(topicFilter);
        if (!TopicNames.hasWildcard(topicFilter)) {
            T value = get(topicFilter);
            return value == null ? List.of() : List.of(value);
        }
        String[] levels = TopicNames.levels(topicFilter);
        List<T> found = new ArrayList<>();
        // Breadth-first, one filter level at a time: no recursion, whatever the depth.
        List<Node<T>> current = new ArrayList<>();
        List<Node<T>> next = new ArrayList<>();
        current.add(root);
        for (int i = 0; i < levels.length && !current.isEmpty(); i++) {
            String level = levels[i];
            // [MQTT-4.7.2-1] A filter starting with a wildcard does not match topics starting with '$'.
            boolean skipDollarTopics = i == 0;
            for (Node<T> node : current) {
                if (level.equals(MULTI_LEVEL)) {
                    // '#' matches the parent level ("sport/#" matches "sport") and everything below.
                    collectSubtree(node, skipDollarTopics, found);
                } else if (level.equals(SINGLE_LEVEL)) {
                    Map<String, Node<T>> children = node.children;
                    if (children != null) {
                        for (Map.Entry<String, Node<T>> child : children.entrySet()) {
                            if (!(skipDollarTopics && child.getKey().startsWith("$"))) {
                                next.add(child.getValue());
                            }
                        }
                    }
                } else {
                    Node<T> child = node.child(level);
                    if (child != null) {
                        next.add(child);
                    }
                }
            }
            List<Node<T>> visited = current;
            current = next;
            next = visited;
            next.clear();
        }
        for (Node<T> node : current) {
            addIfPresent(node.value, found);
        }
        return found;
    }

    /** Number of topics with a retained message. */
    public int size() {
        return size;
    }

    /** Number of tree nodes including the root: 1 when empty, which is what pruning guarantees. */
    int nodeCount() {
        int[] count = {0};
        forEachNode(root, false, node -> count[0]++);
        return count[0];
    }

    private static <T> void collectSubtree(Node<T> top, boolean skipDollarChildren, List<T> found) {
        forEachNode(top, skipDollarChildren, node -> addIfPresent(node.value, found));
    }

    /** Visits a node and all below it, depth-first with an explicit stack, not recursion. */
    private static <T> void forEachNode(Node<T> top, boolean skipDollarChildren, Consumer<Node<T>> action) {
        Deque<Node<T>> pending = new ArrayDeque<>();
        action.accept(top);
        Map<String, Node<T>> topChildren = top.children;
        if (topChildren != null) {
            topChildren.forEach((name, child) -> {
                if (!(skipDollarChildren && name.startsWith("$"))) {
                    pending.push(child);
                }
            });
        }
        while (!pending.isEmpty()) {
            Node<T> node = pending.pop();
            action.accept(node);
            Map<String, Node<T>> children = node.children;
            if (children != null) {
                children.values().forEach(pending::push);
            }
        }
    }

    private static <T> void addIfPresent(T value, List<T> found) {
        if (value != null) {
            found.add(value);
        }
    }

    /** One topic level; fields are read without locking and written under the write lock. */
    private static final class Node<T> {
        volatile ConcurrentHashMap<String, Node<T>> children;
        volatile T value;

        Node<T> child(String level) {
            Map<String, Node<T>> current = children;
            return current == null ? null : current.get(level);
        }

        Node<T> childForWrite(String level) {
            if (children == null) {
                children = new ConcurrentHashMap<>(1);
            }
            return children.computeIfAbsent(level, l -> new Node<>());
        }

        void removeChild(String level) {
            children.remove(level);
            if (children.isEmpty()) {
                children = null;
            }
        }

        boolean isEmpty() {
            return children == null && value == null;
        }
    }
}
