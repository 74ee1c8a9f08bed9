package io.fleetmq.core.cluster;

import java.util.Objects;

/**
 * What a node tells operators about itself with every heartbeat, beside its {@link NodeStatus}:
 * carried in a header of the heartbeat record, so that a node that does not know it reads the
 * heartbeat as before. Nothing in the cluster's own decisions depends on it.
 *
 * @param address           where the node's MQTT listener is bound (host:port), or null if unknown
 * @param startedAtMillis   when the node's process started, epoch millis
 * @param version           the node's software version, or null if unknown
 * @param connectedSessions sessions with a connected client on the node
 * @param draining          whether the node sends its clients elsewhere and refuses new ones
 */
public record NodeInfo(String address, long startedAtMillis, String version, int connectedSessions,
                       boolean draining) {

    public NodeInfo {
        if (connectedSessions < 0) {
            throw new IllegalArgumentException("connectedSessions must not be negative: " + connectedSessions);
        }
    }

    /** Same info with another count of connected sessions. */
    public NodeInfo withConnectedSessions(int count) {
        return new NodeInfo(address, startedAtMillis, version, count, draining);
    }

    @Override
    public String toString() {
        return "NodeInfo[" + Objects.toString(address, "?") + ", started " + startedAtMillis + ", version "
                + version + ", " + connectedSessions + " connected" + (draining ? ", draining]" : "]");
    }
}
