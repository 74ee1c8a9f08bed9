package io.fleetmq.session;

import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.subscription.Subscription;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * What a session actor needs of the cluster: to ask the connect sequence and report disconnects,
 * to read the shared state of a session, and to publish its subscriptions to the other nodes.
 * Implemented over Kafka by {@link io.fleetmq.session.cluster.ClusterLink}.
 */
public interface ClusterPort {

    /** This node's incarnation (see {@link io.fleetmq.core.cluster.NodeStatus}). */
    long incarnation();

    /** How long a CONNECT may wait for the connect sequence. */
    Duration connectTimeout();

    /** Hands an event to the connect sequence; completes once it is stored. */
    CompletableFuture<?> event(SessionEvent event);

    /** The session of {@code clientId} as the cluster knows it. */
    Optional<SessionState> session(String clientId);

    /** The session's subscriptions changed on this node, in its connection {@code epoch}. */
    void subscriptionsChanged(String clientId, long epoch, List<Subscription> subscriptions);

    /**
     * Whether this node may serve clients now: false once it has fenced itself off the cluster
     * (DESIGN.md, "When a node dies"), and then for good.
     */
    default boolean serving() {
        return true;
    }

    /**
     * Whether the cluster takes one more persistent APPLICATION session for {@code clientId}: true if
     * the client already has one (it resumes or replaces it), else if the cluster holds fewer than
     * its bound (sessions.max-application-sessions).
     */
    default boolean admitsApplicationSession(String clientId) {
        return true;
    }
}
