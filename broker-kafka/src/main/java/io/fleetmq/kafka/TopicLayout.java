package io.fleetmq.kafka;

import java.util.ArrayList;
import java.util.Collection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the broker's shared topics where they are missing and verifies the ones that exist.
 *
 * <p>State topics must have exactly one partition (one total order of updates) and be compacted
 * (the latest record per key is the state); on any other layout a node would silently lose or
 * reorder updates, so start-up is refused instead.
 */
public final class TopicLayout {

    /** The least time the layout waits for the leaders of its topics at start-up. */
    static final Duration STARTUP_WAIT = Duration.ofSeconds(30);


    private static final Logger log = LoggerFactory.getLogger(TopicLayout.class);

    private final Admin admin;
    private final KafkaSettings settings;
    private final BrokerTopics topics;

    public TopicLayout(Admin admin, KafkaSettings settings, BrokerTopics topics) {
        this.admin = admin;
        this.settings = settings;
        this.topics = topics;
    }

    /** The topics this layout declares, with their partition counts and configs. */
    public List<NewTopic> declaredTopics() {
        List<NewTopic> declared = new ArrayList<>();
        declared.add(topic(topics.publish(), settings.publishPartitions(), Map.of()));
        declared.add(topic(topics.sessionEvents(), settings.sessionEventPartitions(), Map.of()));
        declared.add(topic(topics.devicePersisted(), settings.devicePersistedPartitions(), Map.of()));
        declared.add(topic(topics.deadLetter(), 1, Map.of()));
        for (String state : topics.stateTopics()) {
            declared.add(topic(state, 1, Map.of(
                    TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT)));
        }
        return declared;
    }

    /**
     * Creates what is missing, then checks everything.
     *
     * @throws TopicLayoutException if an existing topic has a layout the broker cannot run on
     */
    public void ensure() {
        List<NewTopic> declared = declaredTopics();
        Set<String> existing = await(() -> admin.listTopics().names(), "list topics");
        List<NewTopic> missing = declared.stream().filter(t -> !existing.contains(t.name())).toList();
        if (!missing.isEmpty()) {
            create(missing);
        }
        awaitLeadersServing(verify(declared));
    }

    /**
     * Creates this node's own topics where missing: {@code node.<node>} (one partition) and
     * {@code downlink.<node>}. Both only carry traffic to live connections, so they keep an hour.
     *
     * @return the partition count of the node's downlink topic
     */
    public int ensureNodeTopics(String nodeId, int downlinkPartitions) {
        Map<String, String> shortLived = Map.of(TopicConfig.RETENTION_MS_CONFIG, "3600000");
        List<NewTopic> declared = List.of(
                topic(topics.node(nodeId), 1, shortLived),
                topic(topics.downlink(nodeId), downlinkPartitions, shortLived));
        Set<String> existing = await(() -> admin.listTopics().names(), "list topics");
        List<NewTopic> missing = declared.stream().filter(t -> !existing.contains(t.name())).toList();
        if (!missing.isEmpty()) {
            create(missing);
        }
        Map<String, TopicDescription> descriptions = await(() -> admin.describeTopics(
                declared.stream().map(NewTopic::name).toList()).allTopicNames(), "describe node topics");
        verifyRecordConfigs(declared.stream().map(NewTopic::name).toList());
        awaitLeadersServing(descriptions);
        return descriptions.get(topics.downlink(nodeId)).partitions().size();
    }

    /**
     * Returns once the leader of every partition serves it. Kafka 4.4 brokers (KAFKA-15591, fixed
     * in 4.5) can reorder an idempotent producer's first batches to a partition still being created,
     * and the earlier batch then fails; a ListOffsets request is answered only by a leader that has
     * the partition online, so once it answers, writes are safe.
     */
    private void awaitLeadersServing(Map<String, TopicDescription> descriptions) {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        descriptions.forEach((name, d) -> d.partitions()
                .forEach(p -> latest.put(new TopicPartition(name, p.partition()), OffsetSpec.latest())));
        // New topics' leaders may take longer than one request timeout on a busy controller.
        Duration wait = settings.requestTimeout().compareTo(STARTUP_WAIT) > 0 ? settings.requestTimeout() : STARTUP_WAIT;
        await(() -> admin.listOffsets(latest).all(), "reach the leader of every partition", wait);
    }

    private void create(List<NewTopic> missing) {
        try {
            admin.createTopics(missing).all().get(settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            log.info("Created Kafka topics {}", missing.stream()
                    .map(t -> t.name() + " (" + t.numPartitions() + ")").toList());
        } catch (ExecutionException e) {
            // Another node starting at the same moment may have created some of them first.
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("cannot create Kafka topics: " + e.getCause().getMessage(), e.getCause());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating Kafka topics", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("Kafka did not create the broker's topics within "
                    + settings.requestTimeout().toSeconds() + " s", e);
        }
    }

    /** Checks the layout and returns the topics' descriptions. */
    private Map<String, TopicDescription> verify(List<NewTopic> declared) {
        Collection<String> names = declared.stream().map(NewTopic::name).toList();
        Map<String, TopicDescription> descriptions = await(() -> admin.describeTopics(names).allTopicNames(), "describe topics");
        List<ConfigResource> resources = topics.stateTopics().stream()
                .map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n)).toList();
        Map<ConfigResource, Config> configs = await(() -> admin.describeConfigs(resources).all(), "describe topic configs");

        for (String state : topics.stateTopics()) {
            int partitions = descriptions.get(state).partitions().size();
            if (partitions != 1) {
                throw new TopicLayoutException("state topic " + state + " has " + partitions
                        + " partitions but must have exactly 1; recreate it or fix kafka.topic-prefix");
            }
            ConfigEntry policy = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, state))
                    .get(TopicConfig.CLEANUP_POLICY_CONFIG);
            String value = policy == null ? "" : policy.value();
            if (!List.of(value.split(",")).contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
                throw new TopicLayoutException("state topic " + state + " has cleanup.policy=" + value
                        + " but must be compacted (cleanup.policy=compact)");
            }
        }
        for (NewTopic t : declared) {
            int actual = descriptions.get(t.name()).partitions().size();
            if (t.numPartitions() > 1 && actual != t.numPartitions()) {
                // Not fatal: keys still map to one partition each, just not the count configured.
                log.warn("Kafka topic {} has {} partitions, configuration asks for {}; keeping {}",
                        t.name(), actual, t.numPartitions(), actual);
            }
        }
        verifyRecordConfigs(names);
        return descriptions;
    }

    /**
     * Checks that every topic takes the broker's largest record and keeps as many in-sync replicas
     * as configured. {@code describeConfigs} answers a topic's effective {@code max.message.bytes}:
     * its own override, else the Kafka broker's {@code message.max.bytes}.
     *
     * @throws TopicLayoutException naming the topic, its value and the broker setting it must fit
     */
    public void verifyRecordConfigs(Collection<String> names) {
        List<ConfigResource> resources = names.stream()
                .map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n)).toList();
        Map<ConfigResource, Config> configs = await(() -> admin.describeConfigs(resources).all(),
                "describe topic configs");
        RecordLimits limits = settings.recordLimits();
        for (String name : names) {
            Config config = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, name));
            long maxMessageBytes = longConfig(config, TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Long.MAX_VALUE);
            if (maxMessageBytes < limits.topicMaxMessageBytes()) {
                throw new TopicLayoutException(recordSizeProblem(name, maxMessageBytes));
            }
            long minInsync = longConfig(config, TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Long.MAX_VALUE);
            if (minInsync < settings.minInsyncReplicas()) {
                throw new TopicLayoutException("Kafka topic " + name + " has min.insync.replicas=" + minInsync
                        + " but kafka.min-insync-replicas (KAFKA_MIN_INSYNC_REPLICAS) asks for "
                        + settings.minInsyncReplicas() + "; raise the topic's min.insync.replicas or lower the setting");
            }
        }
    }

    /** The one line a node refuses to start with when a topic cannot take its largest record. */
    String recordSizeProblem(String topic, long maxMessageBytes) {
        RecordLimits limits = settings.recordLimits();
        return "Kafka topic " + topic + " has max.message.bytes=" + maxMessageBytes + " but mqtt.max-packet-size"
                + " (MQTT_MAX_PACKET_SIZE) " + limits.maxPacketSize() + " needs at least "
                + limits.topicMaxMessageBytes() + "; raise the topic's max.message.bytes (or the Kafka broker's"
                + " message.max.bytes) or lower mqtt.max-packet-size";
    }

    private static long longConfig(Config config, String key, long absent) {
        ConfigEntry entry = config == null ? null : config.get(key);
        if (entry == null || entry.value() == null) {
            return absent;
        }
        try {
            return Long.parseLong(entry.value().trim());
        } catch (NumberFormatException e) {
            return absent;
        }
    }

    private NewTopic topic(String name, int partitions, Map<String, String> config) {
        return new NewTopic(name, partitions, settings.replicationFactor())
                .configs(withRecordConfigs(settings, config));
    }

    /**
     * {@code config} plus what every topic of the broker is created with: room for the largest
     * record (see {@link RecordLimits}) and the configured {@code min.insync.replicas}.
     */
    public static Map<String, String> withRecordConfigs(KafkaSettings settings, Map<String, String> config) {
        Map<String, String> all = new HashMap<>(config);
        all.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(settings.recordLimits().topicMaxMessageBytes()));
        all.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(settings.minInsyncReplicas()));
        return all;
    }

    /**
     * Waits for {@code request}; retries while Kafka says a topic is unknown, because a topic just
     * created becomes visible to metadata requests a moment after the create call returns.
     */
    private <T> T await(Supplier<KafkaFuture<T>> request, String what) {
        return await(request, what, settings.requestTimeout());
    }

    /**
     * Asks again, each time waiting the request timeout, while Kafka is still settling, for {@code total} at most.
     * Settling shows as a retriable error: a topic not yet known to the broker asked, a leader not yet
     * elected, or the admin client's own timeout when it could not find a node to send the call to
     * ("Timed out waiting for a node assignment", which a busy controller causes for new topics).
     */
    <T> T await(Supplier<KafkaFuture<T>> request, String what, Duration total) {
        long deadline = System.nanoTime() + total.toNanos();
        while (true) {
            try {
                return request.get().get(settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof RetriableException) || System.nanoTime() > deadline) {
                    throw new IllegalStateException("cannot " + what + ": " + e.getCause().getMessage(), e.getCause());
                }
                sleepBriefly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while trying to " + what, e);
            } catch (TimeoutException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Kafka did not answer '" + what + "' within "
                            + total.toSeconds() + " s", e);
                }
            }
        }
    }

    private static void sleepBriefly() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for new topics", e);
        }
    }
}
