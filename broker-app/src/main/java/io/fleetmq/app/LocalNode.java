package io.fleetmq.app;

import io.fleetmq.core.cluster.NodeInfo;
import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;

/**
 * What this node says about itself with its heartbeats (see {@link NodeInfo}), and whether an
 * operator drained it. It belongs to the process, not to an incarnation: a node that fences itself
 * and rejoins stays drained. It is not stored anywhere: a restarted node serves again, which is
 * what an operator who drained a node to restart it wants.
 */
final class LocalNode {

    private final long startedAtMillis = System.currentTimeMillis();
    private final String version;
    private volatile String address;
    private volatile boolean draining;

    LocalNode() {
        this.version = BrokerNode.class.getPackage().getImplementationVersion();
    }

    /** Where the MQTT TCP listener is bound, once it is. */
    void address(String hostPort) {
        this.address = hostPort;
    }

    boolean draining() {
        return draining;
    }

    /** @return whether this changed the state */
    boolean draining(boolean drain) {
        boolean was = draining;
        draining = drain;
        return was != drain;
    }

    NodeInfo info(int connectedSessions) {
        return new NodeInfo(address, startedAtMillis, version, connectedSessions, draining);
    }

    /** Down while drained, so load balancers send clients elsewhere; required for readiness. */
    HealthCheck health() {
        return new HealthCheck() {
            @Override
            public String name() {
                return "drain";
            }

            @Override
            public HealthStatus check() {
                return draining ? HealthStatus.down("drained by an operator: clients are sent to other nodes")
                        : HealthStatus.up("not drained");
            }
        };
    }
}
