package io.fleetmq.app.http;

import io.fleetmq.core.cluster.NodeInfo;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the admin API needs of the cluster's membership for {@code /api/v1/cluster/nodes}: the nodes
 * this node has heard of, and a way to drain one. Implemented over the node's current incarnation;
 * a method throws {@link IllegalStateException} when the node cannot serve (fenced and rejoining),
 * which the API answers with 503.
 */
public interface ClusterNodes {

    /**
     * One node as this node knows it.
     *
     * @param incarnation     its current run (a restarted or rejoined node has a new one)
     * @param alive           whether this node counts it alive
     * @param up              false once it said it left
     * @param heartbeatMillis its latest heartbeat, by its clock
     * @param info            what it said about itself with that heartbeat; null if nothing
     * @param self            whether it is the node that answers
     * @param fenced          (this node only) whether its incarnation fenced itself off the cluster
     */
    record Node(String nodeId, long incarnation, boolean alive, boolean up, long heartbeatMillis, NodeInfo info,
                boolean self, boolean fenced) {
    }

    /** Every node heard of, this one included. */
    List<Node> nodes();

    /**
     * Tells node {@code nodeId}, through Kafka, to drain ({@code drain} true) or to take clients
     * again, and waits up to {@code wait} for its heartbeat to say it did.
     *
     * @return the node as known when it reported the change or the wait ended; empty if no node has that ID
     */
    Optional<Node> drain(String nodeId, boolean drain, Duration wait);
}
