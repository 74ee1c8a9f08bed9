package io.fleetmq.kafka;

import java.util.List;

/**
 * Names of the Kafka topics the broker uses (DESIGN.md, "Kafka topics"), all under one prefix.
 * Per-node and per-client topic names are derived here too, so no other class builds a topic name
 * by concatenation.
 */
public final class BrokerTopics {

    private final String prefix;

    public BrokerTopics(String prefix) {
        this.prefix = prefix;
    }

    /** Every incoming PUBLISH, keyed by publisher client ID. */
    public String publish() {
        return prefix + "publish";
    }

    /** CONNECT / DISCONNECT requests, keyed by client ID, decided in order per client ID. */
    public String sessionEvents() {
        return prefix + "session.events";
    }

    /** Messages for persistent DEVICE subscribers on their way into Redis. */
    public String devicePersisted() {
        return prefix + "device.persisted";
    }

    public String sessions() {
        return prefix + "sessions";
    }

    public String subscriptions() {
        return prefix + "subscriptions";
    }

    public String retained() {
        return prefix + "retained";
    }

    public String blocked() {
        return prefix + "blocked";
    }

    public String nodes() {
        return prefix + "nodes";
    }

    /** Messages routed to the subscribers connected to {@code nodeId}. */
    public String downlink(String nodeId) {
        return prefix + "downlink." + nodeId;
    }

    /** Answers and commands of the connect sequence for {@code nodeId}. */
    public String node(String nodeId) {
        return prefix + "node." + nodeId;
    }

    /**
     * The replicated-state topics: one partition (a single total order) and compacted (the latest
     * value per key is the state). Every node reads them from the beginning on boot.
     */
    public List<String> stateTopics() {
        return List.of(sessions(), subscriptions(), retained(), blocked(), nodes());
    }
}
