package io.fleetmq.app.http;

import java.time.Duration;
import java.util.List;

/**
 * What the admin API reads of the running cluster for operators: dropped messages, statistics and
 * shared subscriptions. Implemented by the node over its current incarnation; a method throws
 * {@link Unavailable} while the node cannot answer (starting, or rejoining the cluster).
 */
public interface OperationsView {

    /** The node's ID. */
    String nodeId();

    /** The statistics' sample interval ({@code admin.stats-interval}). */
    Duration statsInterval();

    /** Every node known: this node first, then the others that reported within the hour. */
    List<OpsModels.NodeOps> nodes();

    /** The cluster's shared subscriptions, with the backlog of the APPLICATION ones. */
    List<OpsModels.SharedSubscription> sharedSubscriptions();

    /** Deletes an APPLICATION shared subscription's backlog topic and consumer group. */
    DeleteOutcome deleteSharedSubscription(String group, String topicFilter);

    enum DeleteOutcome { DELETED, NOT_FOUND, HAS_MEMBERS, NOT_APPLICATION }

    /** The node cannot answer now; the API answers 503 with the message. */
    final class Unavailable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Unavailable(String message) {
            super(message, null, false, false);
        }
    }
}
