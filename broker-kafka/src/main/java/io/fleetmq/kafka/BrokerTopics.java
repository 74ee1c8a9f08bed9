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

    /**
     * Records the broker can never handle (too large for Kafka, not decodable, refused for good),
     * each with headers saying why and where it came from, so they are kept for inspection instead
     * of stalling the partition they were read from.
     */
    public String deadLetter() {
        return prefix + "dead-letter";
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

    /**
     * Changes of credentials, rules and blocked clients, announced to every node (keyed by the
     * entity, so compaction keeps each entity's latest change).
     */
    public String security() {
        return prefix + "security";
    }

    public String nodes() {
        return prefix + "nodes";
    }

    /**
     * What each node reports for operators every few seconds (its counters, its recent dropped
     * messages), followed by every node so any node's admin API shows the whole cluster. Kept for
     * about an hour, the span of the statistics.
     */
    public String ops() {
        return prefix + "ops";
    }

    /**
     * The backlog of one persistent APPLICATION client. Client IDs are any UTF-8, topic names only
     * letters, digits, '.', '_' and '-': every other byte, '_' and '.' too, is written as '_' and two
     * hex digits, so two client IDs never share a topic (nor one of the shared groups' topics). An ID too long for a topic name keeps its
     * beginning and gets a hash of the whole.
     */
    public String app(String clientId) {
        return bounded(prefix + "app." + escape(clientId), clientId);
    }

    /**
     * The backlog of the shared subscription {@code $share/<group>/<filter>} of APPLICATION clients:
     * {@code app.shared.<group>.<filter>}, both escaped like client IDs. The filter is part of the
     * name because the same group name with another filter is another shared subscription
     * (MQTT 5.0 section 4.8.2). No client's backlog can have this name: a '.' in a client ID is
     * escaped.
     */
    /** What every name {@link #appShared} gives starts with. */
    public String appSharedPrefix() {
        return prefix + "app.shared.";
    }

    public String appShared(String group, String topicFilter) {
        return bounded(prefix + "app.shared." + escape(group) + "." + escape(topicFilter), group + "/" + topicFilter);
    }

    private static String escape(String id) {
        StringBuilder escaped = new StringBuilder();
        for (byte b : id.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xFF);
            if (c < 0x80 && (Character.isLetterOrDigit(c) || c == '-')) {
                escaped.append(c);
            } else {
                escaped.append('_').append(String.format("%02x", b & 0xFF));
            }
        }
        return escaped.toString();
    }

    /** Kafka allows 249 characters: a longer name keeps its beginning and gets a hash of {@code id}. */
    private static String bounded(String name, String id) {
        if (name.length() <= 249) {
            return name;
        }
        byte[] bytes = id.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String hash = Integer.toHexString(id.hashCode())
                + Long.toHexString(java.util.UUID.nameUUIDFromBytes(bytes).getMostSignificantBits());
        return name.substring(0, 249 - hash.length() - 1) + "-" + hash;
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
        return List.of(sessions(), subscriptions(), retained(), security(), nodes());
    }
}
