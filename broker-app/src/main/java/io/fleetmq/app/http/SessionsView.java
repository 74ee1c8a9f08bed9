package io.fleetmq.app.http;

import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.session.SessionView;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The sessions of the cluster as the admin API sees them, from the node's running incarnation:
 * the replicated session states and subscriptions every node holds, what only the session's own
 * node knows, and the ways to reach a session wherever it is.
 */
public interface SessionsView {

    /** This node's ID. */
    String nodeId();

    /** Sessions whose client ID is {@code from} or after, in client ID order. */
    Stream<SessionState> sessions(String from);

    Optional<SessionState> session(String clientId);

    /** The client's subscriptions from the cluster's subscription state. */
    List<Subscription> subscriptions(String clientId);

    /** Whether the node holding {@code s} is alive (a gone node's sessions are the connect sequence's). */
    boolean nodeAlive(SessionState s);

    /** What this node's actor of the session holds now (in-flight counts); null if it is not here. */
    SessionView local(String clientId);

    /** Messages in the DEVICE queue of a persistent DEVICE session; null if Redis does not answer in time. */
    Long deviceQueued(String clientId);

    /**
     * Records in a persistent APPLICATION session's backlog that its client has not consumed: end
     * offset minus its committed offset; null if Kafka does not answer in time.
     */
    Long applicationBacklog(String clientId);

    /**
     * Disconnects the client with 0x98 (3.1.1: closes its connection) and, with {@code endSession},
     * ends its session as expiry would, on the node holding it: this one directly, another through
     * that node's Kafka topic. Returns once the command is handed over (the effect follows).
     *
     * @throws IllegalStateException if the command could not be handed to Kafka in time
     */
    void disconnect(SessionState s, boolean endSession);
}
