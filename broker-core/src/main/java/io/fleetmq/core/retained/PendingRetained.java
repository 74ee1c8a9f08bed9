package io.fleetmq.core.retained;

import io.fleetmq.core.topic.TopicNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Retained changes this node has acknowledged to their publishers but not yet read back from the
 * cluster's retained log: the overlay that lets a SUBSCRIBE made right after a PUBACK see the
 * message the PUBACK was for.
 *
 * <p>A change stays pending until the log delivers the record made from the same PUBLISH (same
 * publish-log position), or a record from a later PUBLISH of the same publish partition, which
 * replaced it in any case. Records of other publishers that arrive before ours were written to the
 * log before it, so they are older and do not end the overlay: once the log catches up, ours (or
 * something newer) is the state. A pending change whose record never comes (the retained log
 * refused it for good) is forgotten after a lifetime.
 *
 * <p>Several pending changes of one topic: the last acknowledged is shown. Changes are made under
 * the index's write lock; readers take the immutable map without locking.
 */
final class PendingRetained<T> {

    /** One acknowledged change; {@code value} null means the retained message was deleted. */
    record Change<T>(String topic, T value, LogPosition position, long deadline) {
    }

    private final long lifetimeNanos;
    private final LongSupplier nanoClock;
    /** Immutable: topic to its pending changes, oldest first. Replaced as a whole. */
    private volatile Map<String, List<Change<T>>> byTopic = Map.of();

    PendingRetained(long lifetimeNanos, LongSupplier nanoClock) {
        if (lifetimeNanos <= 0) {
            throw new IllegalArgumentException("pending lifetime must be positive: " + lifetimeNanos);
        }
        this.lifetimeNanos = lifetimeNanos;
        this.nanoClock = nanoClock;
    }

    /** Called under the index's write lock. */
    void add(String topic, T value, LogPosition position) {
        long now = nanoClock.getAsLong();
        Map<String, List<Change<T>>> next = pruned(now);
        List<Change<T>> changes = new ArrayList<>(next.getOrDefault(topic, List.of()));
        changes.add(new Change<>(topic, value, position, now + lifetimeNanos));
        next.put(topic, List.copyOf(changes));
        byTopic = Map.copyOf(next);
    }

    /**
     * The log delivered the record of {@code topic} made at {@code position} (null if unknown): ends
     * the pending change it came from and those it replaced. Called under the index's write lock.
     */
    void confirmed(String topic, LogPosition position) {
        Map<String, List<Change<T>>> current = byTopic;
        if (current.isEmpty()) {
            return;
        }
        long now = nanoClock.getAsLong();
        Map<String, List<Change<T>>> next = pruned(now);
        List<Change<T>> changes = next.get(topic);
        if (changes != null && position != null) {
            List<Change<T>> left = new ArrayList<>(changes.size());
            for (Change<T> c : changes) {
                if (!position.isAtOrAfter(c.position())) {
                    left.add(c);
                }
            }
            if (left.isEmpty()) {
                next.remove(topic);
            } else {
                next.put(topic, List.copyOf(left));
            }
        }
        byTopic = Map.copyOf(next);
    }

    private Map<String, List<Change<T>>> pruned(long now) {
        Map<String, List<Change<T>>> next = new HashMap<>();
        byTopic.forEach((topic, changes) -> {
            List<Change<T>> live = changes.stream().filter(c -> c.deadline() - now > 0).toList();
            if (!live.isEmpty()) {
                next.put(topic, live);
            }
        });
        return next;
    }

    boolean isEmpty() {
        return byTopic.isEmpty();
    }

    /** The change shown for each topic with a live pending change: the last acknowledged. */
    Map<String, Change<T>> shown() {
        Map<String, List<Change<T>>> current = byTopic;
        if (current.isEmpty()) {
            return Map.of();
        }
        long now = nanoClock.getAsLong();
        Map<String, Change<T>> shown = new HashMap<>();
        current.forEach((topic, changes) -> {
            for (int i = changes.size() - 1; i >= 0; i--) {
                if (changes.get(i).deadline() - now > 0) {
                    shown.put(topic, changes.get(i));
                    break;
                }
            }
        });
        return shown;
    }

    /** The change shown for {@code topic}, or null if it has none pending. */
    Change<T> shown(String topic) {
        List<Change<T>> changes = byTopic.get(topic);
        if (changes == null) {
            return null;
        }
        long now = nanoClock.getAsLong();
        for (int i = changes.size() - 1; i >= 0; i--) {
            if (changes.get(i).deadline() - now > 0) {
                return changes.get(i);
            }
        }
        return null;
    }

    /** Pending changes whose topic {@code filter} matches. */
    List<Change<T>> matching(Map<String, Change<T>> shown, String filter) {
        List<Change<T>> found = new ArrayList<>();
        for (Change<T> c : shown.values()) {
            if (TopicNames.matches(filter, c.topic())) {
                found.add(c);
            }
        }
        return found;
    }
}
