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
    /** Client IDs of the persistent APPLICATION sessions in {@link #states}. */
    private final java.util.Set<String> applicationClients = ConcurrentHashMap.newKeySet();

    /** A write of the connect sequence on its way to Kafka; {@code state} null = deleted. */
    static final class Pending {
        final SessionState state;
        volatile long offset = Long.MAX_VALUE;

        Pending(SessionState state) {
            this.state = state;
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

    /** A record of the {@code sessions} topic, in topic order. */
    public void applied(String clientId, SessionState state, long offset) {
        SessionState before = state == null ? states.remove(clientId) : states.put(clientId, state);
        if (persistentApplication(state)) {
            applicationClients.add(clientId);
        } else if (persistentApplication(before)) {
            applicationClients.remove(clientId);
        }
        if (!pending.isEmpty()) {
            pending.entrySet().removeIf(e -> e.getValue().offset <= offset);
        }
    }

    /** The connect sequence wrote {@code state} (null = deleted); effective here at once. */
    Pending written(String clientId, SessionState state) {
        Pending p = new Pending(state);
        pending.put(clientId, p);
        return p;
    }

    Collection<SessionState> states() {
        return states.values();
    }
}
