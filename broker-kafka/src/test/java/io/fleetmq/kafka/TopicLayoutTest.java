package io.fleetmq.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.testkit.TestServices;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the embedded Kafka of the test kit. Each test uses its own topic prefix. */
class TopicLayoutTest {

    private KafkaSettings settings;
    private BrokerTopics topics;
    private KafkaClients clients;
    private Admin admin;

    @BeforeEach
    void setUp() {
        String prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + ".";
        settings = new KafkaSettings(TestServices.shared().kafkaBootstrapServers(), prefix, 4, 3, 2, (short) 1,
                Duration.ofSeconds(10));
        topics = new BrokerTopics(prefix);
        clients = new KafkaClients(settings, "test-node");
        admin = clients.admin();
    }

    @AfterEach
    void tearDown() {
        admin.close();
    }

    @Test
    void createsEveryTopicWithItsPartitionsAndCompactsTheStateTopics() throws Exception {
        new TopicLayout(admin, settings, topics).ensure();

        Map<String, TopicDescription> d = admin.describeTopics(List.of(topics.publish(), topics.sessionEvents(),
                topics.devicePersisted(), topics.sessions())).allTopicNames().get();
        assertEquals(4, d.get(topics.publish()).partitions().size());
        assertEquals(3, d.get(topics.sessionEvents()).partitions().size());
        assertEquals(2, d.get(topics.devicePersisted()).partitions().size());
        for (String state : topics.stateTopics()) {
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, state);
            String policy = admin.describeConfigs(List.of(r)).all().get().get(r)
                    .get(TopicConfig.CLEANUP_POLICY_CONFIG).value();
            assertEquals("compact", policy, state);
            assertEquals(1, admin.describeTopics(List.of(state)).allTopicNames().get().get(state).partitions().size());
        }
    }

    @Test
    void ensureIsIdempotent() {
        new TopicLayout(admin, settings, topics).ensure();
        new TopicLayout(admin, settings, topics).ensure();
    }

    @Test
    void refusesAStateTopicWithSeveralPartitions() throws Exception {
        admin.createTopics(List.of(new NewTopic(topics.retained(), 3, (short) 1)
                .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, "compact")))).all().get();
        TopicLayoutException e = assertThrows(TopicLayoutException.class,
                () -> new TopicLayout(admin, settings, topics).ensure());
        assertTrue(e.getMessage().contains(topics.retained() + " has 3 partitions"), e.getMessage());
    }

    @Test
    void refusesAStateTopicThatIsNotCompacted() throws Exception {
        admin.createTopics(List.of(new NewTopic(topics.sessions(), 1, (short) 1))).all().get();
        TopicLayoutException e = assertThrows(TopicLayoutException.class,
                () -> new TopicLayout(admin, settings, topics).ensure());
        assertTrue(e.getMessage().contains(topics.sessions() + " has cleanup.policy=delete"), e.getMessage());
    }

    /**
     * The topic's effective value of {@code key}. A topic just created may be unknown to the Kafka
     * broker's metadata for a moment (KRaft applies it asynchronously): asked again until known.
     */
    private String config(String topic, String key) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                return admin.describeConfigs(List.of(r)).all().get().get(r).get(key).value();
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)
                        || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50); // polling a condition: the topic's metadata reaching the broker
            }
        }
    }

    @Test
    void everyCreatedTopicTakesTheLargestRecordAndKeepsTheConfiguredInSyncReplicas() throws Exception {
        new TopicLayout(admin, settings, topics).ensure();
        new TopicLayout(admin, settings, topics).ensureNodeTopics("node-1", 2);
        String expected = Integer.toString(settings.recordLimits().topicMaxMessageBytes());
        List<String> all = new java.util.ArrayList<>(List.of(topics.publish(), topics.sessionEvents(),
                topics.devicePersisted(), topics.deadLetter(), topics.node("node-1"), topics.downlink("node-1")));
        all.addAll(topics.stateTopics());
        for (String topic : all) {
            assertEquals(expected, config(topic, TopicConfig.MAX_MESSAGE_BYTES_CONFIG), topic);
            assertEquals("1", config(topic, TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG), topic);
        }
        var app = new io.fleetmq.kafka.app.AppTopics(admin, settings, Duration.ofHours(1), 1_048_576, 2);
        assertTrue(app.ensure("app-1"));
        assertTrue(app.ensureSharedAsync("g", "a/#").get(30, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(expected, config(app.topic("app-1"), TopicConfig.MAX_MESSAGE_BYTES_CONFIG));
        assertEquals(expected, config(app.sharedTopic("g", "a/#"), TopicConfig.MAX_MESSAGE_BYTES_CONFIG));
    }

    @Test
    void refusesATopicThatCannotTakeAPacketOfTheMaximumSize() throws Exception {
        // Kafka's own default, 1 MiB + 12 bytes: a PUBLISH of the default packet limit does not fit.
        admin.createTopics(List.of(new NewTopic(topics.publish(), 4, (short) 1)
                .configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "1048588")))).all().get();
        TopicLayoutException e = assertThrows(TopicLayoutException.class,
                () -> new TopicLayout(admin, settings, topics).ensure());
        assertEquals(1, e.getMessage().lines().count());
        assertTrue(e.getMessage().contains(topics.publish() + " has max.message.bytes=1048588"), e.getMessage());
        assertTrue(e.getMessage().contains("mqtt.max-packet-size (MQTT_MAX_PACKET_SIZE) 1048576"), e.getMessage());
    }

    @Test
    void aSmallerPacketLimitAcceptsTheSameTopic() throws Exception {
        admin.createTopics(List.of(new NewTopic(topics.publish(), 4, (short) 1)
                .configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "1048588")))).all().get();
        KafkaSettings small = new KafkaSettings(settings.bootstrapServers(), settings.topicPrefix(), 4, 3, 2,
                (short) 1, Duration.ofSeconds(10), 1, 600_000);
        new TopicLayout(admin, small, topics).ensure();
        assertEquals(Integer.toString(small.recordLimits().topicMaxMessageBytes()),
                config(topics.sessions(), TopicConfig.MAX_MESSAGE_BYTES_CONFIG));
    }

    @Test
    void refusesATopicWithFewerInSyncReplicasThanConfigured() throws Exception {
        admin.createTopics(List.of(new NewTopic(topics.devicePersisted(), 2, (short) 1).configs(Map.of(
                TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "2000000")))).all().get();
        KafkaSettings strict = new KafkaSettings(settings.bootstrapServers(), settings.topicPrefix(), 4, 3, 2,
                (short) 1, Duration.ofSeconds(10), 2, RecordLimits.DEFAULT_MAX_PACKET_SIZE);
        TopicLayoutException e = assertThrows(TopicLayoutException.class,
                () -> new TopicLayout(admin, strict, topics).verifyRecordConfigs(List.of(topics.devicePersisted())));
        assertTrue(e.getMessage().contains("kafka.min-insync-replicas (KAFKA_MIN_INSYNC_REPLICAS)"), e.getMessage());
    }

    @Test
    void healthCheckIsUpAgainstTheEmbeddedKafkaAndDownAgainstNothing() {
        assertTrue(new KafkaHealthCheck(admin, settings).check().up());
        KafkaSettings nowhere = new KafkaSettings("127.0.0.1:1", "x.", 1, 1, 1, (short) 1, Duration.ofMillis(800));
        try (Admin unreachable = new KafkaClients(nowhere, "test-node").admin()) {
            var status = new KafkaHealthCheck(unreachable, nowhere).check();
            assertEquals(false, status.up());
            assertTrue(status.detail().contains("127.0.0.1:1"), status.detail());
        }
    }
    /**
     * A busy controller can leave the admin client without a node to send a call to until its own
     * timeout ends ("Timed out waiting for a node assignment"): start-up asks again until its wait is
     * over, but gives up at once on an error that asking again cannot cure.
     */
    @Test
    void startUpAsksAgainAfterKafkaTimeoutsButNotAfterOtherErrors() {
        TopicLayout layout = new TopicLayout(admin, settings, topics);
        AtomicInteger asked = new AtomicInteger();
        String answer = layout.await(() -> asked.incrementAndGet() <= 3
                ? failed(new org.apache.kafka.common.errors.TimeoutException("Timed out waiting for a node assignment"))
                : KafkaFuture.completedFuture("served"), "reach the leader of every partition", Duration.ofSeconds(30));
        assertEquals("served", answer);
        assertEquals(4, asked.get());

        asked.set(0);
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> layout.await(() -> {
            asked.incrementAndGet();
            return failed(new TopicAuthorizationException("not allowed"));
        }, "list topics", Duration.ofSeconds(30)));
        assertEquals(1, asked.get(), "a non-retriable error is not asked again");
        assertTrue(refused.getMessage().contains("cannot list topics: not allowed"), refused.getMessage());

        IllegalStateException gaveUp = assertThrows(IllegalStateException.class, () -> layout.await(
                () -> failed(new org.apache.kafka.common.errors.TimeoutException("no node")),
                "reach the leader of every partition", Duration.ofMillis(300)));
        assertTrue(gaveUp.getMessage().contains("cannot reach the leader of every partition: no node"),
                gaveUp.getMessage());
    }

    private static <T> KafkaFuture<T> failed(Throwable cause) {
        KafkaFutureImpl<T> future = new KafkaFutureImpl<>();
        future.completeExceptionally(cause);
        return future;
    }
}
