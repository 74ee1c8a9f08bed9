package io.fleetmq.kafka;

import java.time.Duration;
import java.util.Objects;

/**
 * How this node reaches Kafka and how the broker's topics are laid out there.
 *
 * @param bootstrapServers      host:port list of the cluster
 * @param topicPrefix           prepended to every topic the broker owns, so several brokers can
 *                              share one Kafka cluster
 * @param publishPartitions     partitions of the {@code publish} topic (its consumer group spans all
 *                              nodes, so this bounds how many nodes share the routing work)
 * @param sessionEventPartitions partitions of {@code session.events}
 * @param devicePersistedPartitions partitions of {@code device.persisted}
 * @param replicationFactor     replication of every topic the broker creates; 1 on a single
 *                              broker, 3 in production
 * @param requestTimeout        how long one admin or health request may take before Kafka counts as
 *                              unreachable
 * @param minInsyncReplicas     {@code min.insync.replicas} of every topic the broker creates (and the
 *                              least it accepts on existing ones): how many replicas must have a
 *                              write before acks=all confirms it; 1 on a single broker, 2 in
 *                              production
 * @param maxPacketSize         {@code mqtt.max-packet-size}: sizes records, see {@link RecordLimits}
 * @param clientSecurity        Kafka client properties for TLS and SASL ({@code security.protocol},
 *                              {@code sasl.*}, {@code ssl.*}) and the operator's other client settings,
 *                              given to every client of the node after its own tuning
 * @param compressionType       the producers' {@code compression.type}: {@code lz4} (the default),
 *                              {@code zstd}, {@code gzip} or {@code none}; not snappy, which can grow
 *                              incompressible data by a sixth, more than {@link RecordLimits} allows for
 */
public record KafkaSettings(
        String bootstrapServers,
        String topicPrefix,
        int publishPartitions,
        int sessionEventPartitions,
        int devicePersistedPartitions,
        short replicationFactor,
        Duration requestTimeout,
        int minInsyncReplicas,
        int maxPacketSize,
        java.util.Map<String, String> clientSecurity,
        String compressionType) {

    /** The values {@link #compressionType()} may take. */
    public static final java.util.List<String> COMPRESSION_TYPES =
            java.util.List.of("lz4", "zstd", "gzip", "none");

    /** With {@code lz4} compression. */
    public KafkaSettings(String bootstrapServers, String topicPrefix, int publishPartitions,
            int sessionEventPartitions, int devicePersistedPartitions, short replicationFactor,
            Duration requestTimeout, int minInsyncReplicas, int maxPacketSize,
            java.util.Map<String, String> clientSecurity) {
        this(bootstrapServers, topicPrefix, publishPartitions, sessionEventPartitions, devicePersistedPartitions,
                replicationFactor, requestTimeout, minInsyncReplicas, maxPacketSize, clientSecurity, "lz4");
    }

    /** Without client security settings (plaintext, no authentication). */
    public KafkaSettings(String bootstrapServers, String topicPrefix, int publishPartitions,
            int sessionEventPartitions, int devicePersistedPartitions, short replicationFactor,
            Duration requestTimeout, int minInsyncReplicas, int maxPacketSize) {
        this(bootstrapServers, topicPrefix, publishPartitions, sessionEventPartitions, devicePersistedPartitions,
                replicationFactor, requestTimeout, minInsyncReplicas, maxPacketSize, java.util.Map.of());
    }

    /** With {@code min.insync.replicas=1} and the default MQTT packet limit of 1 MiB. */
    public KafkaSettings(String bootstrapServers, String topicPrefix, int publishPartitions,
            int sessionEventPartitions, int devicePersistedPartitions, short replicationFactor,
            Duration requestTimeout) {
        this(bootstrapServers, topicPrefix, publishPartitions, sessionEventPartitions, devicePersistedPartitions,
                replicationFactor, requestTimeout, 1, RecordLimits.DEFAULT_MAX_PACKET_SIZE);
    }

    public KafkaSettings {
        clientSecurity = clientSecurity == null ? java.util.Map.of() : java.util.Map.copyOf(clientSecurity);
        compressionType = compressionType == null ? "lz4" : compressionType;
        if (!COMPRESSION_TYPES.contains(compressionType)) {
            throw new IllegalArgumentException("compression type must be one of " + COMPRESSION_TYPES);
        }
        Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        Objects.requireNonNull(topicPrefix, "topicPrefix");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        if (publishPartitions < 1 || sessionEventPartitions < 1 || devicePersistedPartitions < 1) {
            throw new IllegalArgumentException("partition counts must be at least 1");
        }
        if (replicationFactor < 1) {
            throw new IllegalArgumentException("replication factor must be at least 1");
        }
        if (minInsyncReplicas < 1) {
            throw new IllegalArgumentException("min.insync.replicas must be at least 1");
        }
        if (maxPacketSize < 1) {
            throw new IllegalArgumentException("maximum packet size must be positive");
        }
    }

    /** How large the broker's records may be, from {@link #maxPacketSize()}. */
    public RecordLimits recordLimits() {
        return new RecordLimits(maxPacketSize);
    }
}
