package io.fleetmq.kafka.cluster;

import java.time.Duration;
import java.util.Objects;

/**
 * How a node takes part in the cluster.
 *
 * @param nodeId             this node's identity, unique in the cluster
 * @param heartbeatInterval  how often the node writes its heartbeat to {@code nodes}
 * @param nodeTimeout        a node whose last heartbeat is older than this is dead
 * @param downlinkPartitions partitions of this node's {@code downlink.<node>} topic
 * @param connectTimeout     how long a CONNECT may wait for the connect sequence's answer
 * @param shutdownServerReference where MQTT 5 clients are sent when this node stops (DISCONNECT 0x9C
 *                           with this Server Reference), or null to send 0x8B Server shutting down
 */
public record ClusterSettings(String nodeId, Duration heartbeatInterval, Duration nodeTimeout, int downlinkPartitions,
                              Duration connectTimeout, String shutdownServerReference) {

    public ClusterSettings {
        Objects.requireNonNull(nodeId, "nodeId");
        if (heartbeatInterval.isNegative() || heartbeatInterval.isZero()) {
            throw new IllegalArgumentException("heartbeat interval must be positive");
        }
        if (nodeTimeout.compareTo(heartbeatInterval.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("node timeout must be at least twice the heartbeat interval");
        }
        if (downlinkPartitions < 1) {
            throw new IllegalArgumentException("downlink partitions must be at least 1");
        }
    }
}
