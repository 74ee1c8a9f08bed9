package io.fleetmq.session;

import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.mqtt.Packet;
import java.util.Collection;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The sessions living on this node, by client ID. A session outlives its connections (until it
 * expires), so the actor is per session, not per connection: a reconnect or a take-over is one more
 * message in the same mailbox, in order with the deliveries to it.
 */
public final class SessionRegistry {

    private final SessionServices services;
    private final ConcurrentMap<String, SessionActor> sessions = new ConcurrentHashMap<>();
    /**
     * The sessions by the credential their client authenticated with: a {@link SessionActor} when
     * one holds it (the common case, a credential per device), a set once more than one did (a user
     * name shared by a fleet). A review of one credential goes to these only, so a change of a
     * credential costs its own sessions, not a pass over every session of the node.
     */
    private final ConcurrentMap<String, Object> byCredential = new ConcurrentHashMap<>();
    /** Set while the node is drained: its clients go elsewhere and new CONNECTs are refused. */
    private volatile boolean draining;

    public SessionRegistry(SessionServices services) {
        this.services = services;
    }

    /**
     * Hands an accepted CONNECT to the session of its client ID, creating the session if there is
     * none; an empty client ID gets a unique one assigned [MQTT-3.1.3-6].
     *
     * @return the actor that now owns the connection, for the rest of the connection's life
     */
    public SessionActor connect(Packet.Connect connect, ClientConnection connection) {
        String assigned = connect.clientId().isEmpty() ? "auto-" + UUID.randomUUID() : null;
        String clientId = assigned != null ? assigned : connect.clientId();
        // Under the map's lock for this client ID, so that it cannot interleave with the session
        // deciding to end (tryEnd): the actor that takes the CONNECT stays until it is processed.
        SessionActor actor = sessions.compute(clientId, (id, existing) -> {
            SessionActor taking = existing != null ? existing : new SessionActor(id, services, this);
            taking.expectConnect();
            return taking;
        });
        // Only now, with the actor in the map: a CONNECT told from inside compute could be decided,
        // and its answer arrive, while the map still showed no session for the client ID (a reader
        // does not wait for an update in progress), and the answer was then taken for a connection
        // that had given up.
        actor.attach(connection, connect, assigned);
        return actor;
    }

    /**
     * A session whose state has ended asks to be removed. It is, and its actor closed, unless a
     * CONNECT for the client ID has been queued to it meanwhile: that connection then continues
     * with this actor as a new session.
     *
     * @return whether the actor ended
     */
    boolean tryEnd(SessionActor actor) {
        boolean[] ended = {true};
        sessions.compute(actor.clientId(), (id, existing) -> {
            if (existing == actor && actor.hasConnectPending()) {
                ended[0] = false;
                return existing;
            }
            if (existing == actor) {
                actor.close();
                credential(actor, actor.credential(), null);
                return null;
            }
            actor.close(); // not the registered one (cannot happen); close it all the same
            return existing;
        });
        return ended[0];
    }

    /**
     * The client of {@code actor} authenticated with {@code now} instead of {@code before} (either
     * may be null); called from the actor's own turn, or under the registry's lock as it ends.
     */
    void credential(SessionActor actor, String before, String now) {
        if (before != null && !before.equals(now)) {
            byCredential.computeIfPresent(before, (id, held) -> {
                if (held == actor) {
                    return null;
                }
                if (held instanceof Set<?> several) {
                    several.remove(actor);
                    return several.isEmpty() ? null : held;
                }
                return held;
            });
        }
        if (now != null && !now.equals(before)) {
            byCredential.compute(now, (id, held) -> {
                if (held == null || held == actor) {
                    return actor;
                }
                if (held instanceof Set<?> several) {
                    @SuppressWarnings("unchecked")
                    Set<SessionActor> sessions = (Set<SessionActor>) several;
                    sessions.add(actor);
                    return held;
                }
                Set<SessionActor> sessions = ConcurrentHashMap.newKeySet();
                sessions.add((SessionActor) held);
                sessions.add(actor);
                return sessions;
            });
        }
    }

    /**
     * Hands {@code review} to the sessions it concerns: those of its credential if it names one,
     * else every session of the node.
     */
    public void review(ClientAccess.Review review) {
        String credential = review.credentialId();
        if (credential == null) {
            sessions.values().forEach(actor -> actor.review(review));
            return;
        }
        Object held = byCredential.get(credential);
        if (held instanceof SessionActor one) {
            one.review(review);
        } else if (held instanceof Set<?> several) {
            for (Object actor : several) {
                ((SessionActor) actor).review(review);
            }
        }
    }

    /** How many credentials the sessions of this node hold (for tests). */
    int credentialsHeld() {
        return byCredential.size();
    }

    /** The session of {@code clientId} on this node, or null. */
    public SessionActor get(String clientId) {
        return sessions.get(clientId);
    }

    public Collection<SessionActor> all() {
        return sessions.values();
    }

    public int size() {
        return sessions.size();
    }

    /** An answer or command of the connect sequence for this node. */
    public void command(NodeCommand command) {
        if (command.clientId() == null) {
            return; // addressed to the node (a drain), handled where the node is wired
        }
        SessionActor actor = sessions.get(command.clientId());
        if (command instanceof NodeCommand.ConnectAccepted a) {
            if (actor != null) {
                actor.accepted(a);
            } else {
                // The connection gave up waiting and its session is gone here (or the answer is for an
                // earlier incarnation of this node): undo the acceptance. The session keeps the expiry
                // it was accepted with; a node that just rejoined does not know it yet.
                services.cluster().event(new SessionEvent.Disconnected(a.clientId(), a.epoch(),
                        SessionEvent.Disconnected.KEEP_EXPIRY, null, services.clock().getAsLong()));
            }
        } else if (command instanceof NodeCommand.TakeOver t) {
            if (actor != null) {
                actor.takenOver(t);
            } else {
                // Nothing held here (a DISCONNECT ended it, and said so before this answer).
                services.cluster().event(new SessionEvent.Released(t.clientId(), t.epoch()));
            }
        } else if (command instanceof NodeCommand.Queued q && actor != null) {
            actor.queued(q);
        } else if (command instanceof NodeCommand.AdminDisconnect a && actor != null) {
            actor.adminDisconnect(a);
        }
    }

    /**
     * This node fenced itself: every client is sent to another node (0x9C) and waiting CONNECTs are
     * refused (0x88); see {@link SessionActor#fenced}.
     */
    public void fence(String serverReference) {
        for (SessionActor actor : sessions.values()) {
            actor.fenced(serverReference);
        }
    }

    /**
     * An operator drains the node: every connected client is sent to another node (0x9C Use another
     * server, with {@code serverReference} if not null; a 3.1.1 client's connection is closed), and
     * from now on CONNECTs are refused (CONNACK 0x9C; 3.1.1: 3 Server unavailable) until
     * {@link #undrain()}. Sessions stay, for their clients to resume on another node. The flag is
     * set before the sessions are told, so a CONNECT that reaches a session after them is refused by
     * the flag, and one already waiting is refused by the session.
     */
    public void drain(String serverReference) {
        draining = true;
        for (SessionActor actor : sessions.values()) {
            actor.drained(serverReference);
        }
    }

    /** The node takes clients again. */
    public void undrain() {
        draining = false;
    }

    /** Whether the node is drained: CONNECTs are refused. */
    public boolean draining() {
        return draining;
    }

    /**
     * The node's sessions counted by type and state, in the order DEVICE connected, DEVICE
     * disconnected, APPLICATION connected, APPLICATION disconnected; one pass over the sessions.
     */
    public long[] countByTypeAndState() {
        long[] counts = new long[4];
        for (SessionActor actor : sessions.values()) {
            int type = io.fleetmq.session.cluster.ClientTypes.APPLICATION.equals(actor.clientType()) ? 2 : 0;
            counts[type + (actor.isOnline() ? 0 : 1)]++;
        }
        return counts;
    }

    /** Sessions with a connected client; may lag by one step of each session. */
    public int connectedCount() {
        int n = 0;
        for (SessionActor actor : sessions.values()) {
            if (actor.isOnline()) {
                n++;
            }
        }
        return n;
    }

    /**
     * Tells every connected client the node is going away and ends its connection [MQTT-3.14.2]:
     * with 0x9C and {@code serverReference} if not null, else with 0x8B.
     */
    public void shutdown(String serverReference) {
        for (SessionActor actor : sessions.values()) {
            actor.serverShutdown(serverReference);
        }
    }
}
