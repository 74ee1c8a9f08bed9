package io.fleetmq.core.cluster;

import java.util.Objects;

/**
 * One node's record in the compacted {@code nodes} topic, keyed by node ID: written at start, on
 * every heartbeat, and once more with {@code up = false} when the node leaves gracefully.
 *
 * @param nodeId          the node's identity ({@code BROKER_NODE_ID})
 * @param incarnation     distinguishes one run of a node from the next: a node restarted under the
 *                        same ID is a new incarnation, and sessions held by the old one are gone
 * @param up              false once the node has left
 * @param heartbeatMillis when the node wrote this record, by its clock
 */
public record NodeStatus(String nodeId, long incarnation, boolean up, long heartbeatMillis) {

    public NodeStatus {
        Objects.requireNonNull(nodeId, "nodeId");
    }
}
