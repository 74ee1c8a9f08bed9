package io.fleetmq.session.cluster;

import io.fleetmq.core.cluster.SessionState;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * This node's copy of the {@code sessions} topic: every session of the cluster by client ID, as the
 * connect sequence last wrote it. Written by the topic's follower; the connect sequence also puts its
 * own writes here at once ({@link #written}), so its next decision sees them before they come back
 * through Kafka.
 */
public final class SessionDirectory {

    private final Map<String, SessionState> states = new ConcurrentHashMap<>();
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();
    /**
     * The pending writes Kafka has stored, by their offset in the topic's one partition: those at or
     * before a record the follower applies are in {@link #states} by then and leave {@link #pending}.
     * Ordered, so that each applied record looks only at the writes it settles, not at all of them.
     */
    private final java.util.concurrent.ConcurrentSkipListMap<Long, Pending> stored =
            new java.util.concurrent.ConcurrentSkipListMap<>();
    /**
     * The client IDs of {@link #states} in order, so that the admin API pages through 100,000
     * sessions without sorting them per request. Kept beside the hash map, whose lookups the
     * message path makes, rather than replacing it.
     */
    private final java.util.concurrent.ConcurrentSkipListSet<String> ordered =
            new java.util.concurrent.ConcurrentSkipListSet<>();
    /** Client IDs of the persistent APPLICATION sessions in {@link #states}. */
    private final java.util.Set<String> applicationClients = ConcurrentHashMap.newKeySet();

    /**
     * How many deleted sessions' {@link SessionState#decidedAt} are remembered, newest first: enough for
     * the events of the batches a connect sequence may read again (its own uncommitted batch, or the
     * one a fenced node left), which are at most a few polls of {@code session.events}.
     */
    static final int RECENT_DELETES = 65_536;

    /** Deleted sessions' last deciding event, so a batch read again does not revive them. */
    private final Map<String, Long> recentDeletes = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<>(1024, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
                    return size() > RECENT_DELETES;
                }
            });

    /**
     * A write of the connect sequence on its way to Kafka; {@code state} null = deleted, then
     * {@code deletedAt} is the offset of the event that deleted it.
     */
    static final class Pending {
        final String clientId;
        final SessionState state;
        final long deletedAt;

        Pending(String clientId, SessionState state, long deletedAt) {
            this.clientId = clientId;
            this.state = state;
            this.deletedAt = deletedAt;
        }
    }

    /** The session of {@code clientId}, if the cluster has one. */
    public Optional<SessionState> get(String clientId) {
        Pending p = pending.get(clientId);
        if (p != null) {
            return Optional.ofNullable(p.state);
        }
        return Optional.ofNullable(states.get(clientId));
    }

    /** Every session known, with the connect sequence's pending writes applied. */
    public Stream<SessionState> all() {
        Map<String, SessionState> view = new java.util.HashMap<>(states);
        pending.forEach((id, p) -> {
            if (p.state == null) {
                view.remove(id);
            } else {
                view.put(id, p.state);
            }
        });
        return view.values().stream();
    }

    /**
     * Every session known whose client ID is {@code from} or after it, in client ID order ({@link
     * String#compareTo}), with the connect sequence's pending writes applied. Weakly consistent: a
     * session written meanwhile may or may not be in it.
     */
    public Stream<SessionState> ordered(String from) {
        java.util.NavigableSet<String> added = new java.util.TreeSet<>();
        pending.forEach((id, p) -> {
            if (p.state != null && id.compareTo(from) >= 0 && !ordered.contains(id)) {
                added.add(id);
            }
        });
        java.util.Iterator<String> ids = added.isEmpty() ? ordered.tailSet(from).iterator()
                : merged(ordered.tailSet(from).iterator(), added.iterator());
        return java.util.stream.StreamSupport.stream(java.util.Spliterators.spliteratorUnknownSize(ids,
                java.util.Spliterator.ORDERED | java.util.Spliterator.DISTINCT | java.util.Spliterator.NONNULL), false)
                .map(id -> get(id).orElse(null))
                .filter(java.util.Objects::nonNull);
    }

    /** Two ascending iterators of distinct strings as one. */
    private static java.util.Iterator<String> merged(java.util.Iterator<String> a, java.util.Iterator<String> b) {
        return new java.util.Iterator<>() {
            private String nextA = a.hasNext() ? a.next() : null;
            private String nextB = b.hasNext() ? b.next() : null;

            @Override
            public boolean hasNext() {
                return nextA != null || nextB != null;
            }

            @Override
            public String next() {
                if (!hasNext()) {
                    throw new java.util.NoSuchElementException();
                }
                String out;
                if (nextB == null || nextA != null && nextA.compareTo(nextB) <= 0) {
                    out = nextA;
                    if (nextB != null && nextB.equals(nextA)) {
                        nextB = b.hasNext() ? b.next() : null;
                    }
                    nextA = a.hasNext() ? a.next() : null;
                } else {
                    out = nextB;
                    nextB = b.hasNext() ? b.next() : null;
                }
                return out;
            }
        };
    }

    public int size() {
        return states.size();
    }

    /** Persistent APPLICATION sessions in the cluster (each has a Kafka topic of its own). */
    public int applicationSessions() {
        return applicationClients.size();
    }

    /** The client IDs of the persistent APPLICATION sessions in the cluster, a snapshot. */
    public java.util.Set<String> applicationClients() {
        return java.util.Set.copyOf(applicationClients);
    }

    /** Whether the session keeps its messages in a Kafka backlog of its own. */
    public static boolean persistentApplication(SessionState s) {
        return s != null && s.queuing() && ClientTypes.APPLICATION.equals(s.clientType());
    }

    /**
     * The offset of the last event of {@code session.events} decided for {@code clientId} (its session's
     * record, or the delete that ended it), with the connect sequence's pending writes applied;
     * {@link SessionState#UNKNOWN} if none is known.
     */
    public long decidedAt(String clientId) {
        Pending p = pending.get(clientId);
        if (p != null) {
            return p.state == null ? p.deletedAt : p.state.decidedAt();
        }
        SessionState s = states.get(clientId);
        if (s != null) {
            return s.decidedAt();
        }
        Long deleted = recentDeletes.get(clientId);
        return deleted == null ? SessionState.UNKNOWN : deleted;
    }

    /** A record of the {@code sessions} topic, in topic order, without a deciding event. */
    public void applied(String clientId, SessionState state, long offset) {
        applied(clientId, state, offset, state == null ? SessionState.UNKNOWN : state.decidedAt());
    }

    /**
     * A record of the {@code sessions} topic, in topic order; {@code decidedAt} from its header
     * ({@link SessionState#UNKNOWN} if it has none).
     */
    public void applied(String clientId, SessionState state, long offset, long decidedAt) {
        if (state != null && state.decidedAt() != decidedAt) {
            state = state.withDecidedAt(decidedAt);
        }
        SessionState before = state == null ? states.remove(clientId) : states.put(clientId, state);
        if (state == null) {
            ordered.remove(clientId);
            if (decidedAt != SessionState.UNKNOWN) {
                recentDeletes.put(clientId, decidedAt);
            } else {
                recentDeletes.remove(clientId);
            }
        } else {
            recentDeletes.remove(clientId);
            if (before == null) {
                ordered.add(clientId);
            }
        }
        if (persistentApplication(state)) {
            applicationClients.add(clientId);
        } else if (persistentApplication(before)) {
            applicationClients.remove(clientId);
        }
        Map.Entry<Long, Pending> settled;
        while ((settled = stored.firstEntry()) != null && settled.getKey() <= offset) {
            stored.remove(settled.getKey(), settled.getValue());
            // Unless a later write of the same client ID replaced it, which stays pending.
            pending.remove(settled.getValue().clientId, settled.getValue());
        }
    }

    /** The connect sequence wrote {@code state}; effective here at once. */
    Pending written(String clientId, SessionState state) {
        Pending p = new Pending(clientId, state, SessionState.UNKNOWN);
        pending.put(clientId, p);
        return p;
    }

    /** The connect sequence deleted the session, deciding the event at {@code decidedAt}; effective here at once. */
    Pending deleted(String clientId, long decidedAt) {
        Pending p = new Pending(clientId, null, decidedAt);
        pending.put(clientId, p);
        return p;
    }

    /**
     * Kafka stored the write {@code p} at {@code offset}: it stays in this node's view until the
     * follower has applied that record (or a later one), which may already have happened.
     */
    void stored(Pending p, long offset) {
        stored.put(offset, p);
    }

    /**
     * A write of the connect sequence failed: unless a later one replaced it, this node's view falls back
     * to what the topic holds, so the batch read again decides on stored state, not on a decision lost.
     */
    void failed(String clientId, Pending p) {
        pending.remove(clientId, p);
    }

    Collection<SessionState> states() {
        return states.values();
    }
}
