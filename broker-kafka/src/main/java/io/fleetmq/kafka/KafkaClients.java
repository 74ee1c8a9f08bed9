package io.fleetmq.kafka;

import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The one place Kafka clients are built, so every producer and consumer of the broker carries the
 * same explicit settings rather than Kafka's defaults.
 */
public final class KafkaClients {

    private final KafkaSettings settings;
    private final String nodeId;
    private volatile ClientMeters meters;

    public KafkaClients(KafkaSettings settings, String nodeId) {
        this.settings = settings;
        this.nodeId = nodeId;
    }

    /**
     * From now on, producers and the consumers made by {@link #meteredConsumer} export Kafka's
     * client metrics to {@code registry} while they are open.
     */
    public KafkaClients meters(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meters = new ClientMeters(registry);
        return this;
    }

    /** Stops the thread that refreshes the clients' meters; for when the node stops. */
    public void closeMeters() {
        ClientMeters m = meters;
        if (m != null) {
            m.close();
        }
    }

    public KafkaSettings settings() {
        return settings;
    }

    public Admin admin() {
        Properties props = common("admin");
        int timeout = (int) settings.requestTimeout().toMillis();
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeout);
        props.putAll(settings.clientSecurity()); // as for producers
        return Admin.create(props);
    }

    /**
     * Producer settings for writes that something waits on (a PUBACK, a CONNACK): no linger and one
     * request in flight per Kafka broker. A write goes out at once when the connection is idle, and
     * otherwise rides in the next request with everything that came while the last one was out:
     * batches grow with the load instead of with a fixed wait. Kafka serves one connection's
     * requests one at a time anyway, so more in flight only queued them there. The batch size stays
     * Kafka's: larger batches made each round trip longer. Measured in docs/benchmarks.md ("The
     * publish producer sends when Kafka is free").
     */
    public static final Map<String, Object> SEND_WHEN_FREE = Map.of(
            ProducerConfig.LINGER_MS_CONFIG, 0,
            ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);

    /**
     * A producer whose success callback means "stored": acks=all with idempotence, so a PUBACK sent
     * from the callback is never a lie and retries cannot duplicate or reorder a publisher's
     * messages within a partition.
     */
    public KafkaProducer<String, byte[]> producer(String purpose, Map<String, Object> overrides) {
        Properties props = producerProperties(purpose, overrides);
        ClientMeters m = meters;
        return m == null ? new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())
                : m.producer(props, props.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG));
    }

    /** The settings of {@link #producer}: the node's, then {@code overrides}, then the operator's client settings. */
    Properties producerProperties(String purpose, Map<String, Object> overrides) {
        Properties props = common(purpose);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, settings.compressionType());
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.max(
                settings.requestTimeout().toMillis() * 2, 10_000));
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) settings.requestTimeout().toMillis());
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, settings.requestTimeout().toMillis());
        // A PUBLISH of the largest packet size, in its envelope, must fit (RecordLimits); Kafka's
        // default of 1 MiB does not take it.
        props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, settings.recordLimits().maxRecordBytes());
        props.putAll(overrides);
        // TLS and SASL towards the Kafka cluster, and the operator's other client settings
        // (kafka.client-properties-file), the same for every client and last, so they win over the
        // node's tuning; those a promise rests on are refused when the file is read (BrokerConfig).
        props.putAll(settings.clientSecurity());
        return props;
    }

    /** A consumer that commits explicitly: the broker decides when a record has been handled. */
    public KafkaConsumer<String, byte[]> consumer(String purpose, String groupId, Map<String, Object> overrides) {
        return consumer(purpose, groupId, overrides, false);
    }

    /**
     * As {@link #consumer}, exporting Kafka's consumer metrics while open (see {@link #meters}): for
     * the node's long-lived consumers, one per purpose at a time. Short-lived readers and the
     * consumers of APPLICATION sessions (one per session) are not metered.
     */
    public KafkaConsumer<String, byte[]> meteredConsumer(String purpose, String groupId, Map<String, Object> overrides) {
        return consumer(purpose, groupId, overrides, true);
    }

    private KafkaConsumer<String, byte[]> consumer(String purpose, String groupId, Map<String, Object> overrides,
            boolean metered) {
        Properties props = consumerProperties(purpose, groupId, overrides);
        ClientMeters m = meters;
        return m == null || !metered ? new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())
                : m.consumer(props, props.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG));
    }

    /** The settings of a consumer: the node's, then {@code overrides}, then the operator's client settings. */
    Properties consumerProperties(String purpose, String groupId, Map<String, Object> overrides) {
        Properties props = common(purpose);
        if (groupId != null) {
            props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        }
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        // Kafka hands out a batch larger than this anyway, but only one per fetch: sized so a
        // partition of records near the limit is still read at full batches.
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, settings.recordLimits().topicMaxMessageBytes());
        props.putAll(overrides);
        props.putAll(settings.clientSecurity()); // as for producers
        return props;
    }

    private Properties common(String purpose) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "fleetmq-" + nodeId + "-" + purpose);
        // Fail over quickly between brokers and do not hammer an unreachable one.
        props.put(CommonClientConfigs.RECONNECT_BACKOFF_MS_CONFIG, 100);
        props.put(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, 2_000);
        return props;
    }
}
