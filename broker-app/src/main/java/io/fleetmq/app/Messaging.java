package io.fleetmq.app;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.retained.RetainedIndex;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.DeadLetters;
import io.fleetmq.kafka.GroupConsumer;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.TopicLayout;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.ClusterSettings;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.kafka.cluster.NodeInbox;
import io.fleetmq.kafka.cluster.StateFollower;
import io.fleetmq.kafka.publish.PublishConsumer;
import io.fleetmq.kafka.publish.PublishLog;
import io.fleetmq.kafka.publish.PublishedRecord;
import io.fleetmq.kafka.retained.RetainedStore;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.session.MessageDrops;
import io.fleetmq.session.SessionActor;
import io.fleetmq.session.SessionRegistry;
import io.fleetmq.session.SessionServices;
import io.fleetmq.session.cluster.ClusterLink;
import io.fleetmq.kafka.app.AppBacklogs;
import io.fleetmq.kafka.app.AppTopics;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.persistence.redis.Redis;
import io.fleetmq.session.cluster.ClientTypes;
import io.fleetmq.session.cluster.ClusterRouter;
import io.fleetmq.session.cluster.DeviceQueueWriter;
import io.fleetmq.session.cluster.ConnectSequencer;
import io.fleetmq.session.cluster.DeliveryGate;
import io.fleetmq.session.cluster.SessionDirectory;
import io.fleetmq.transport.mqtt.MqttConnectionHandler;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The message path of a node, wired by constructors: the publish log clients write to, this node's
 * place in the cluster (membership, the shared session and subscription state, the connect
 * sequence, the inbox of what other nodes send here), the router, retained messages, and the actors
 * of the sessions.
 */
final class Messaging implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Messaging.class);

    private final BrokerConfig config;
    private final ExecutorService actorPool;
    private final ScheduledThreadPoolExecutor timers;
    private final PublishLog publishLog;
    private final RetainedStore retainedStore;
    private final SessionRegistry sessions;
    private final ClusterProducer clusterProducer;
    private final Membership membership;
    private final SessionDirectory directory;
    private final ClusterRouter router;
    private final DeadLetters deadLetters;
    private final BrokerTopics topics;
    /** A retained update failed for a reason that may pass: the batch is routed again. */
    private boolean retainedFailed;
    private final Deque<AutoCloseable> closeables = new ArrayDeque<>();
    private PublishConsumer consumer;
    private GroupConsumer<SessionEvent> sequence;
    private GroupConsumer<io.fleetmq.core.cluster.Downlink> devicePersisted;
    private final Set<Integer> ownedPublishPartitions = new HashSet<>();

    Messaging(BrokerConfig config, KafkaClients kafka, Admin admin, Redis redis, MeterRegistry meters) {
        this.config = config;
        ClusterSettings cluster = config.cluster();
        String nodeId = config.nodeId();
        Duration requestTimeout = kafka.settings().requestTimeout();
        BrokerTopics topics = new BrokerTopics(kafka.settings().topicPrefix());
        this.topics = topics;
        // Actors run on a work-stealing pool sized to the cores: a mailbox is a short task, and
        // async mode keeps the tasks of many mailboxes in FIFO order.
        this.actorPool = new ForkJoinPool(Runtime.getRuntime().availableProcessors(),
                pool -> {
                    var t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
                    t.setName("fleetmq-actor-" + t.getPoolIndex());
                    return t;
                }, null, true);
        this.timers = new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("fleetmq-timer", true));
        timers.setRemoveOnCancelPolicy(true);

        MessageDrops drops = new MessageDrops(meters);
        SubscriptionTrie subscriptions = new SubscriptionTrie();
        RetainedIndex<BrokerMessage> retained = new RetainedIndex<>();
        this.publishLog = new PublishLog(kafka, meters);
        this.retainedStore = new RetainedStore(kafka, meters);

        int downlinkPartitions = new TopicLayout(admin, kafka.settings(), topics)
                .ensureNodeTopics(nodeId, cluster.downlinkPartitions());
        this.clusterProducer = new ClusterProducer(kafka);
        // One per consumer: each waits for its own dead letters before it commits.
        this.deadLetters = new DeadLetters(clusterProducer, topics, meters, requestTimeout);
        this.membership = new Membership(kafka, admin, cluster, clusterProducer, timers, System::currentTimeMillis);
        this.directory = new SessionDirectory();
        ClusterLink link = new ClusterLink(cluster, topics, clusterProducer, membership, directory);
        AppTopics appTopics = new AppTopics(admin, kafka.settings(), config.applicationRetention(),
                config.applicationRetentionBytes(), config.applicationSharedPartitions());
        DeviceQueues deviceQueues = new DeviceQueues(redis.binaryCommands(), kafka.settings().topicPrefix(),
                config.deviceQueueLimit(), config.deviceQueueTtl());
        SessionServices services = new SessionServices(nodeId, config.mqttLimits(), publishLog,
                retainedStore, subscriptions, retained, actorPool, timers, meters, drops, System::currentTimeMillis,
                link, deviceQueues, new ClientTypes(config.applicationClientIdPattern()),
                new AppBacklogs(kafka, appTopics));
        this.sessions = new SessionRegistry(services);
        this.router = new ClusterRouter(nodeId, subscriptions, sessions, directory, membership, clusterProducer, topics,
                new DeliveryGate(), drops, deadLetters, kafka.settings().recordLimits().maxDownlinkValueBytes());

        // Positioned at the end of this node's topics before anyone learns the node exists.
        NodeInbox inbox = new NodeInbox(kafka, nodeId, downlinkPartitions, sessions::command, router::downlink, meters);
        inbox.start();
        closeables.push(inbox);

        // The node's copies of the shared state must be complete before it takes clients.
        membership.start(requestTimeout.multipliedBy(3));
        StateFollower sessionsFollower = new StateFollower(kafka, admin, topics.sessions(), record -> {
            try {
                directory.applied(record.key(),
                        record.value() == null ? null : ClusterCodec.decodeSessionState(record.value()), record.offset());
            } catch (MessageFormatException e) {
                log.warn("Skipping malformed session record at offset {}: {}", record.offset(), e.getMessage());
            }
        });
        sessionsFollower.start(requestTimeout.multipliedBy(3));
        closeables.push(sessionsFollower);
        StateFollower subscriptionsFollower = new StateFollower(kafka, admin, topics.subscriptions(),
                record -> link.applySubscriptions(record, subscriptions));
        subscriptionsFollower.start(requestTimeout.multipliedBy(3));
        closeables.push(subscriptionsFollower);
        retainedStore.loadAndFollow((topic, message) -> {
            if (message == null) {
                retained.remove(topic);
            } else {
                retained.put(topic, message);
            }
        });

        ConnectSequencer sequencer = new ConnectSequencer(nodeId, topics, clusterProducer, membership, directory,
                sessionsFollower, publishLog, drops, timers, System::currentTimeMillis,
                clusterProducer.partitions(topics.sessionEvents()), requestTimeout, deviceQueues);
        membership.onDeath(sequencer::nodeDied);
        sequencer.appTopics(appTopics);
        this.sequence = new GroupConsumer<>(kafka, meters, topics.sessionEvents(),
                kafka.settings().topicPrefix() + "session-sequence", "session-events", ClusterCodec::decodeEvent,
                sequencer::handle, GroupConsumer.Hooks.none()
                        .withBeforeCommit(sequencer::flushed)
                        .withOwnership(sequencer::ownership)
                        .withIdle(sequencer::idle, Duration.ofMillis(100))
                        .withSessionTimeout(cluster.nodeTimeout())
                        .withDeadLetters(new DeadLetters(clusterProducer, topics, meters, requestTimeout)));
        sequence.start();

        DeviceQueueWriter queueWriter = new DeviceQueueWriter(deviceQueues, directory, membership, clusterProducer,
                topics, drops, requestTimeout);
        this.devicePersisted = new GroupConsumer<>(kafka, meters, topics.devicePersisted(),
                kafka.settings().topicPrefix() + "device-persisted", "device-persisted", ClusterCodec::decodeDownlink,
                queueWriter::handle, GroupConsumer.Hooks.none()
                        .withBeforeCommit(queueWriter::flushed)
                        .withSessionTimeout(cluster.nodeTimeout())
                        .withDeadLetters(new DeadLetters(clusterProducer, topics, meters, requestTimeout)));
        devicePersisted.start();

        this.consumer = new PublishConsumer(kafka, meters, this::route,
                owned -> drainDownlinks(owned, admin, topics.downlink(nodeId), downlinkPartitions, inbox, requestTimeout),
                this::routed, cluster.nodeTimeout(), deadLetters);
        consumer.start();

        Gauge.builder("fleetmq.publish.routing.backlog", consumer, PublishConsumer::lag)
                .description("PUBLISH records in the partitions this node routes that it has not read yet")
                .register(meters);

        Gauge.builder("fleetmq.sessions", sessions, SessionRegistry::size)
                .description("Sessions on this node, connected or not").register(meters);
        Gauge.builder("fleetmq.cluster.sessions", directory, SessionDirectory::size)
                .description("Sessions in the cluster, connected or not").register(meters);
        Gauge.builder("fleetmq.cluster.nodes", membership, m -> m.liveNodes().size())
                .description("Live nodes of the cluster, this one included").register(meters);
        Gauge.builder("fleetmq.subscriptions", subscriptions, SubscriptionTrie::size)
                .description("Subscriptions in the node's trie (the whole cluster's)").register(meters);
        Gauge.builder("fleetmq.retained.messages", retained, RetainedIndex::size)
                .description("Retained messages known to the node").register(meters);
    }

    private void route(PublishedRecord record) {
        BrokerMessage message = record.message();
        if (message.retain()) {
            // [MQTT-3.3.1-5..7] a retained PUBLISH replaces the topic's retained message; an empty
            // payload removes it. Waiting keeps the order with later publishes to the same topic.
            try {
                if (message.payload().length == 0) {
                    retainedStore.delete(message.topic()).join();
                } else {
                    retainedStore.put(message).join();
                }
            } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
                Throwable cause = e.getCause() == null ? e : e.getCause();
                if (DeadLetters.permanent(cause)) {
                    // Kafka will never take it: kept in the dead-letter topic; subscribers still get it.
                    deadLetters.send("retained message not storable: " + cause.getMessage(), topics.publish(),
                            record.partition(), record.offset(), topics.retained(), message.topic(),
                            MessageCodec.encode(message));
                } else {
                    if (!retainedFailed) {
                        log.warn("Retained message of {} not stored; the batch is routed again: {}", message.topic(),
                                cause.toString());
                    }
                    retainedFailed = true;
                }
            }
        }
        router.route(message, record.partition(), record.offset());
    }

    /**
     * The routing consumer's barrier: every write of the batch is stored (or, where Kafka can never
     * take it, in the dead-letter topic); false routes the batch again.
     */
    private boolean routed() {
        boolean retainedStored = !retainedFailed;
        retainedFailed = false;
        return router.flushed() && retainedStored;
    }

    /**
     * Before this node routes a {@code publish} partition it takes over, it reads what the previous
     * owner handed it for that partition through its downlink, so messages reach its sessions in order
     * and once (see {@link DeliveryGate}).
     */
    private void drainDownlinks(Set<Integer> owned, Admin admin, String downlinkTopic, int downlinkPartitions,
            NodeInbox inbox, Duration timeout) {
        Set<Integer> added = new HashSet<>(owned);
        added.removeAll(ownedPublishPartitions);
        ownedPublishPartitions.clear();
        ownedPublishPartitions.addAll(owned);
        Set<Integer> downlinks = new HashSet<>();
        added.forEach(p -> downlinks.add(p % downlinkPartitions));
        for (int d : downlinks) {
            TopicPartition tp = new TopicPartition(downlinkTopic, d);
            try {
                long end = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp)
                        .get(timeout.toMillis(), TimeUnit.MILLISECONDS).offset();
                if (!inbox.awaitDownlink(d, end, timeout)) {
                    log.warn("Downlink partition {} not read up to {} within {}", d, end, timeout);
                }
            } catch (Exception e) {
                log.warn("No end offset of downlink partition {}: {}", d, e.toString());
            }
        }
    }

    Supplier<ChannelHandler> connectionHandlers() {
        return () -> new MqttConnectionHandler(sessions, config.connectTimeoutSeconds(),
                config.mqttLimits().receiveMaximum());
    }

    SessionRegistry sessions() {
        return sessions;
    }

    Membership membership() {
        return membership;
    }

    /**
     * Ready while this node routes and sequences: both its consumers run. The detail names the live
     * nodes and this node's share of the partitions.
     */
    HealthCheck clusterHealth() {
        return new HealthCheck() {
            @Override
            public String name() {
                return "cluster";
            }

            @Override
            public HealthStatus check() {
                if (!consumer.isRunning()) {
                    return HealthStatus.down("publish consumer stopped: "
                            + consumer.failure().map(HealthStatus::describe).orElse("closed"));
                }
                if (!sequence.isRunning()) {
                    return HealthStatus.down("connect sequence stopped: "
                            + sequence.failure().map(HealthStatus::describe).orElse("closed"));
                }
                return HealthStatus.up("live nodes " + membership.liveNodes() + "; this node routes "
                        + consumer.ownedPartitions().size() + " publish partitions and sequences "
                        + sequence.ownedPartitions().size() + " session partitions");
            }
        };
    }

    /**
     * Graceful stop: every connected client is told the server is shutting down (0x8B for MQTT 5)
     * and disconnected, the cluster learns of it, then the consumers stop (handing their partitions
     * to the other nodes), the node says it leaves, and the producers flush what is in flight.
     */
    @Override
    public void close() {
        sessions.shutdown(config.cluster().shutdownServerReference());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (sessions.all().stream().anyMatch(SessionActor::isOnline) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        clusterProducer.flush();
        if (consumer != null) {
            consumer.close();
        }
        if (sequence != null) {
            sequence.close();
        }
        if (devicePersisted != null) {
            devicePersisted.close();
        }
        membership.close();
        while (!closeables.isEmpty()) {
            try {
                closeables.pop().close();
            } catch (Exception e) {
                log.warn("Closing failed: {}", e.toString());
            }
        }
        clusterProducer.close();
        publishLog.close(Duration.ofSeconds(10));
        retainedStore.close();
        timers.shutdownNow();
        actorPool.shutdown();
        try {
            if (!actorPool.awaitTermination(5, TimeUnit.SECONDS)) {
                log.warn("Session actors still busy after 5 s; stopping them");
                actorPool.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
