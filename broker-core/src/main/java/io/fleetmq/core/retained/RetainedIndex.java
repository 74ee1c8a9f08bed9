package io.fleetmq.core.retained;

import io.fleetmq.core.topic.TopicNames;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

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
 * <p>Two writers: the cluster's retained log, applied in its order ({@link #applied}, {@link #put},
 * {@link #remove}), and the node's own publish path, which records a change it has just had stored
 * in the publish log ({@link #acknowledged}) before it acknowledges the PUBLISH. Readers see such a
 * pending change over the log's state until the log delivers it (see {@link PendingRetained}), so a
 * subscription made after a PUBACK on this node sees that message or a newer one.
 *
 * @param <T> the retained message, typically carrying its own topic name
 */
public final class RetainedIndex<T> {

    private static final String SINGLE_LEVEL = String.valueOf(TopicNames.SINGLE_LEVEL);
    private static final String MULTI_LEVEL = String.valueOf(TopicNames.MULTI_LEVEL);

    /** How long a pending change is shown without its record arriving from the retained log. */
    public static final Duration DEFAULT_PENDING_LIFETIME = Duration.ofSeconds(60);

    private final Node<T> root = new Node<>();
    private final Object writeLock = new Object();
    private final ToLongFunction<? super T> weigher;
    private final PendingRetained<T> pending;
    /** Written under {@link #writeLock} only. */
    private volatile int size;
    /** Sum of the weights of the stored values; written under {@link #writeLock} only. */
    private volatile long bytes;
    private volatile int maxMessages = Integer.MAX_VALUE;
    private volatile long maxBytes = Long.MAX_VALUE;

    /** Whether a new retained message fits the bounds, and if not, which one it exceeds. */
    public enum Room {
        FITS, MESSAGES_EXCEEDED, BYTES_EXCEEDED
    }

    /** Values weigh nothing; pending changes live {@link #DEFAULT_PENDING_LIFETIME}. */
    public RetainedIndex() {
        this(value -> 0, DEFAULT_PENDING_LIFETIME, System::nanoTime);
    }

    /**
     * @param weigher         the bytes a value counts for in {@link #bytes()}
     * @param pendingLifetime how long an {@link #acknowledged} change is shown if the retained log
     *                        never delivers it
     * @param nanoClock       {@link System#nanoTime()} outside tests
     */
    public RetainedIndex(ToLongFunction<? super T> weigher, Duration pendingLifetime, LongSupplier nanoClock) {
        this.weigher = Objects.requireNonNull(weigher, "weigher");
        this.pending = new PendingRetained<>(pendingLifetime.toNanos(), nanoClock);
    }

    /**
     * A change read from the retained log: stores {@code value} (or, if null, removes the topic's
     * retained message) and ends the pending change it came from, identified by the position of its
     * PUBLISH in the publish log ({@code null} when unknown).
     */
    public void applied(String topic, T value, LogPosition position) {
        synchronized (writeLock) {
            // The log's state first, then the pending change goes: a reader that no longer sees the
            // pending change already sees the stored one.
            if (value == null) {
                remove(topic);
            } else {
                put(topic, value);
            }
            pending.confirmed(topic, position);
        }
    }

    /**
     * A retained PUBLISH this node has had stored in the publish log at {@code position}, before the
     * retained log has it: shown to readers from now on until {@link #applied} delivers it.
     *
     * @param value the new retained message, or {@code null} if the PUBLISH deletes it
     */
    public void acknowledged(String topic, T value, LogPosition position) {
        TopicNames.validateTopicName(topic);
        Objects.requireNonNull(position, "position");
        synchronized (writeLock) {
            pending.add(topic, value, position);
        }
    }

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
            node.topic = topic;
            node.value = value;
            if (replaced == null) {
                size++;
            } else {
                bytes -= weigher.applyAsLong(replaced);
            }
            bytes += weigher.applyAsLong(value);
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
            bytes -= weigher.applyAsLong(removed);
            for (int i = levels.length; i > 0 && path.get(i).isEmpty(); i--) {
                path.get(i - 1).removeChild(levels[i - 1]);
            }
            return removed;
        }
    }

    /**
     * The topic's retained message, or {@code null}, a pending change of this node included. One
     * walk down the tree, no scan.
     */
    public T get(String topic) {
        PendingRetained.Change<T> change = pending.shown(topic);
        return change != null ? change.value() : stored(topic);
    }

    /**
     * Whether a change of the topic this node acknowledged is still on its way to the retained log:
     * routed from a publish partition of its own, it may land after a later change of another
     * publisher, whatever the order of their acknowledgements.
     */
    public boolean isPending(String topic) {
        return pending.shown(topic) != null;
    }

    /** The retained log's message for the topic, without pending changes. */
    private T stored(String topic) {
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
        // Pending changes first: one that is gone by the time the tree is read has been stored in it.
        Map<String, PendingRetained.Change<T>> shown = pending.shown();
        List<Node<T>> nodes = matchStored(topicFilter);
        List<T> found = new ArrayList<>(nodes.size());
        for (Node<T> node : nodes) {
            T value = node.value;
            if (value != null && !shown.containsKey(node.topic)) {
                found.add(value);
            }
        }
        for (PendingRetained.Change<T> change : pending.matching(shown, topicFilter)) {
            if (change.value() != null) {
                found.add(change.value());
            }
        }
        return found;
    }

    private List<Node<T>> matchStored(String topicFilter) {
        String[] levels = TopicNames.levels(topicFilter);
        List<Node<T>> found = new ArrayList<>();
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
            addIfPresent(node, found);
        }
        return found;
    }

    /** Number of topics with a retained message in the retained log's state. */
    public int size() {
        return size;
    }

    /** Sum of the weights of the retained log's messages. */
    public long bytes() {
        return bytes;
    }

    /**
     * Bounds the index's content for {@link #room}: at most {@code maxMessages} topics and
     * {@code maxBytes} by the weigher. The index itself still stores whatever it is given: the
     * retained log is the truth, and bounds are enforced where retained messages come in.
     */
    public void bound(int maxMessages, long maxBytes) {
        if (maxMessages < 0 || maxBytes < 0) {
            throw new IllegalArgumentException("bounds must not be negative: " + maxMessages + ", " + maxBytes);
        }
        this.maxMessages = maxMessages;
        this.maxBytes = maxBytes;
    }

    /**
     * Whether making {@code value} the retained message of {@code topic} stays within the bounds.
     * Replacing a topic's retained message never adds a topic, and may always keep or lower the
     * bytes, so it fits at the bound; a new topic must fit in both. Read without locking: changes
     * that arrive at the same moment (on this node or others) may together go beyond a bound by
     * what they are.
     */
    public Room room(String topic, T value) {
        long count = size;
        long total = bytes;
        // This node's pending changes count as made: a PUBLISH right after a PUBACK sees its effect.
        for (PendingRetained.Change<T> change : pending.shown().values()) {
            T stored = stored(change.topic());
            count += (change.value() != null ? 1 : 0) - (stored != null ? 1 : 0);
            total += weight(change.value()) - weight(stored);
        }
        T current = get(topic);
        long currentWeight = weight(current);
        long weight = weight(value);
        if (current == null && count >= maxMessages) {
            return Room.MESSAGES_EXCEEDED;
        }
        if (weight > currentWeight && total - currentWeight + weight > maxBytes) {
            return Room.BYTES_EXCEEDED;
        }
        return Room.FITS;
    }

    private long weight(T value) {
        return value == null ? 0 : weigher.applyAsLong(value);
    }

    /** Whether this node has acknowledged changes that the retained log has not delivered yet. */
    public boolean hasPending() {
        return !pending.isEmpty();
    }

    /** Number of tree nodes including the root: 1 when empty, which is what pruning guarantees. */
    int nodeCount() {
        int[] count = {0};
        forEachNode(root, false, node -> count[0]++);
        return count[0];
    }

    private static <T> void collectSubtree(Node<T> top, boolean skipDollarChildren, List<Node<T>> found) {
        forEachNode(top, skipDollarChildren, node -> addIfPresent(node, found));
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

    private static <T> void addIfPresent(Node<T> node, List<Node<T>> found) {
        if (node.value != null) {
            found.add(node);
        }
    }

    /** One topic level; fields are read without locking and written under the write lock. */
    private static final class Node<T> {
        volatile ConcurrentHashMap<String, Node<T>> children;
        volatile T value;
        /** The node's topic name, set before its first value; a node's topic never changes. */
        String topic;

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
