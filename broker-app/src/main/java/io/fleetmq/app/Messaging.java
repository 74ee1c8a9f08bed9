package io.fleetmq.app;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.retained.RetainedIndex;
import io.fleetmq.core.retained.RetainedWeight;
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
import io.fleetmq.kafka.supervise.LoopSupervisor;
import io.fleetmq.kafka.supervise.SupervisedScheduler;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.session.DeliveryBackpressure;
import io.fleetmq.session.MessageDrops;
import io.fleetmq.session.SessionActor;
import io.fleetmq.session.SessionRegistry;
import io.fleetmq.session.LiveDeliveries;
import io.fleetmq.session.SessionServices;
import io.fleetmq.session.cluster.ClusterLink;
import io.fleetmq.kafka.app.AppBacklogs;
import io.fleetmq.kafka.app.AppTopics;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.persistence.redis.Qos2Receipts;
import io.fleetmq.persistence.redis.Redis;
import io.fleetmq.session.cluster.ClientTypes;
import io.fleetmq.session.cluster.ClusterRouter;
import io.fleetmq.session.cluster.RoutingOrder;
import io.fleetmq.session.cluster.DeviceQueueWriter;
import io.fleetmq.session.cluster.ConnectSequencer;
import io.fleetmq.session.cluster.DeliveryGate;
import io.fleetmq.session.cluster.SessionDirectory;
import io.fleetmq.session.cluster.SharedBacklogSweeper;
import io.fleetmq.transport.mqtt.MqttConnectionHandler;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import io.fleetmq.app.security.MqttSecurity;
import io.fleetmq.kafka.security.SecurityFollower;
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
    /** Restarts the background loops below after a failure; gives up (node unready) on one that cannot recover. */
    private final LoopSupervisor loops;
    private final PublishLog publishLog;
    private final RetainedStore retainedStore;
    private final SessionRegistry sessions;
    /** Persistent DEVICE sessions here that take their messages before they are stored. */
    private final LiveDeliveries live;
    private final ClusterProducer clusterProducer;
    private final Membership membership;
    private final SessionDirectory directory;
    private final ClusterRouter router;
    /** From the receipt of the oldest message the routing consumer routed in a batch to the end of that batch's routing. */
    private final io.fleetmq.session.cluster.BatchDelay routingDelay;
    private final RoutingOrder routingOrder;
    private final DeadLetters deadLetters;
    private final BrokerTopics topics;
    private final RetainedRouting retainedRouting;
    private final RetainedIndex<BrokerMessage> retained;
    private final LocalNode local;
    private final SubscriptionTrie subscriptions;
    private final AppTopics appTopics;
    private final AppBacklogs appBacklogs;
    private final Deque<AutoCloseable> closeables = new ArrayDeque<>();
    private PublishConsumer consumer;
    private GroupConsumer<SessionEvent> sequence;
    private GroupConsumer<DeviceQueueWriter.Stored> devicePersisted;
    private final Set<Integer> ownedPublishPartitions = new HashSet<>();
    private final MeterRegistry meters;
    /** Gauges bound to this incarnation's objects, removed when it is fenced or closed. */
    private final java.util.List<Gauge> gauges = new java.util.ArrayList<>();
    /** Holds this node's publishers while deliveries are late, or a DEVICE queue write stalls. */
    private final DeliveryBackpressure backpressure;
    private NodeInbox inbox;
    private final SessionsAdapter sessionsView;
    private volatile boolean fenced;
    private boolean clusterWorkStopped;

    /**
     * @param previousIncarnation the incarnation this node had before it fenced itself, or 0
     * @param local               what the node says about itself, and whether it is drained (kept
     *                            across incarnations)
     */
    Messaging(BrokerConfig config, KafkaClients kafka, Admin admin, Redis redis, MeterRegistry meters,
            long previousIncarnation, MqttSecurity security, LocalNode local,
            io.fleetmq.session.RecentDrops recentDrops) {
        this.config = config;
        this.local = local;
        this.meters = meters;
        this.routingDelay = new io.fleetmq.session.cluster.BatchDelay(meters, "fleetmq.publish.routing.delay",
                "From the receipt of a message to the end of its routing by the routing consumer (its hand-offs to"
                        + " other nodes, DEVICE queues and APPLICATION backlogs stored): the oldest message of each"
                        + " batch the consumer routed, once per batch");
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
        this.loops = new LoopSupervisor(meters, new LoopSupervisor.Policy(Duration.ofMillis(100), Duration.ofSeconds(10),
                config.loopGiveUpAfter()));
        // A timer task that throws is logged and counted, and a periodic one keeps running.
        this.timers = new SupervisedScheduler(1, new DefaultThreadFactory("fleetmq-timer", true), loops, "timer");
        timers.setRemoveOnCancelPolicy(true);

        MessageDrops drops = new MessageDrops(meters, recentDrops, System::currentTimeMillis);
        SubscriptionTrie subscriptions = new SubscriptionTrie();
        this.subscriptions = subscriptions;
        RetainedIndex<BrokerMessage> retained = new RetainedIndex<>(RetainedWeight::of,
                RetainedIndex.DEFAULT_PENDING_LIFETIME, System::nanoTime);
        this.retained = retained;
        retained.bound(config.maxRetainedMessages(), config.maxRetainedBytes());
        this.publishLog = new PublishLog(kafka, meters, io.fleetmq.kafka.publish.ConfirmedProducer.DEFAULT_MAX_BLOCK,
                config.publishBufferBytes());
        // A retained PUBLISH is in this node's index before its PUBACK leaves (the retained log
        // follows later), so a SUBSCRIBE here after the PUBACK sees it.
        publishLog.onRetainedStored((message, at) ->
                retained.acknowledged(message.topic(), message.payload().length == 0 ? null : message, at));
        this.retainedStore = new RetainedStore(kafka, meters).supervisedBy(loops);

        int downlinkPartitions = new TopicLayout(admin, kafka.settings(), topics)
                .ensureNodeTopics(nodeId, cluster.downlinkPartitions());
        this.clusterProducer = new ClusterProducer(kafka);
        // One per consumer: each waits for its own dead letters before it commits.
        this.deadLetters = new DeadLetters(clusterProducer, topics, meters, requestTimeout);
        this.retainedRouting = new RetainedRouting(retainedStore, deadLetters, topics);
        this.membership = new Membership(kafka, admin, cluster, System::currentTimeMillis, loops);
        this.directory = new SessionDirectory();
        ClusterLink link = new ClusterLink(cluster, topics, clusterProducer, membership, directory)
                .maxApplicationSessions(config.maxApplicationSessions());
        AppTopics appTopics = new AppTopics(admin, kafka.settings(), config.applicationRetention(),
                config.applicationRetentionBytes(), config.applicationSharedPartitions());
        this.appTopics = appTopics;
        // Removes, packet identifiers and deletes that Redis refuses are retried on the node's timer
        // thread until it takes them (counted in fleetmq_redis_errors_total).
        DeviceQueues deviceQueues = new DeviceQueues(redis.binaryCommands(), kafka.settings().topicPrefix(),
                config.deviceQueueLimit(), config.deviceQueueTtl(), timers, meters);
        this.backpressure = new DeliveryBackpressure(config.publishBackpressureDelay(),
                config.publishBackpressureMaxWait(), timers, System::nanoTime, meters);
        SessionServices services = new SessionServices(nodeId, config.mqttLimits(), publishLog,
                retainedStore, subscriptions, retained, actorPool, timers, meters, drops, System::currentTimeMillis,
                link, deviceQueues, new ClientTypes(config.applicationClientIdPattern()),
                this.appBacklogs = new AppBacklogs(kafka, appTopics, loops),
                new Qos2Receipts(redis.binaryCommands(), kafka.settings().topicPrefix()), security, backpressure);
        this.sessions = new SessionRegistry(services);
        this.live = services.deviceQueues().live();
        backpressure.localPublishers(clientId -> sessions.get(clientId) != null);
        gauges.addAll(backpressure.registerGauges(meters));
        if (local.draining()) {
            sessions.drain(cluster.shutdownServerReference()); // drained before this incarnation: still
        }
        this.router = new ClusterRouter(nodeId, subscriptions, sessions, directory, membership, clusterProducer, topics,
                new DeliveryGate(), drops, deadLetters, kafka.settings().recordLimits().maxDownlinkValueBytes(), meters,
                backpressure);
        // A PUBLISH written here whose subscribers are all here is routed once Kafka confirms it,
        // not a fetch later; the routing consumer routes everything else and skips those.
        this.routingOrder = new RoutingOrder(meters);
        ClusterRouter stored = router;
        RoutingOrder order = routingOrder;
        publishLog.onStored((message, partition, offset) ->
                order.stored(partition, offset, () -> stored.routeHere(message, partition, offset)));

        this.sessionsView = new SessionsAdapter(nodeId, directory, sessions, subscriptions, membership,
                clusterProducer, topics, link, deviceQueues, appTopics, admin, requestTimeout);

        // Positioned at the end of this node's topics before anyone learns the node exists.
        try {
            join(kafka, admin, meters, cluster, topics, requestTimeout, downlinkPartitions, subscriptions, retained,
                    link, appTopics, deviceQueues, drops, previousIncarnation);
            // Changes of credentials and blocked clients from here on; what came before is read anew.
            SecurityFollower securityFollower = new SecurityFollower(kafka, topics, security::changed, loops);
            securityFollower.start();
            closeables.push(securityFollower);
            security.resync(sessions::review);
        } catch (RuntimeException | Error e) {
            // Nothing of a half-joined incarnation may linger: its threads would act on the cluster.
            close();
            throw e;
        }
    }

    private void join(KafkaClients kafka, Admin admin, MeterRegistry meters, ClusterSettings cluster,
            BrokerTopics topics, Duration requestTimeout, int downlinkPartitions, SubscriptionTrie subscriptions,
            RetainedIndex<BrokerMessage> retained, ClusterLink link, AppTopics appTopics, DeviceQueues deviceQueues,
            MessageDrops drops, long previousIncarnation) {
        String nodeId = config.nodeId();
        inbox = new NodeInbox(kafka, nodeId, downlinkPartitions, this::command, router::downlink, meters, loops);
        inbox.start();
        closeables.push(inbox);

        // The node's copies of the shared state must be complete before it takes clients.
        membership.describeWith(() -> local.info(sessions.connectedCount()));
        membership.start(requestTimeout.multipliedBy(3), previousIncarnation);
        membership.onFenced(() -> fenceListeners.forEach(Runnable::run));
        // A loop of the node that cannot recover leaves it half alive: fence it, so it comes back whole.
        loops.onGiveUp((loop, cause) -> membership.fence("loop " + loop + " cannot recover: " + cause));
        StateFollower sessionsFollower = new StateFollower(kafka, admin, topics.sessions(), record -> {
            try {
                directory.applied(record.key(),
                        record.value() == null ? null : ClusterCodec.decodeSessionState(record.value()), record.offset(),
                        ConnectSequencer.decidedAt(record.headers()));
            } catch (MessageFormatException e) {
                log.warn("Skipping malformed session record at offset {}: {}", record.offset(), e.getMessage());
            }
        }, loops);
        sessionsFollower.start(requestTimeout.multipliedBy(3));
        closeables.push(sessionsFollower);
        StateFollower subscriptionsFollower = new StateFollower(kafka, admin, topics.subscriptions(),
                record -> link.applySubscriptions(record, subscriptions), loops);
        subscriptionsFollower.start(requestTimeout.multipliedBy(3));
        closeables.push(subscriptionsFollower);
        retainedStore.loadAndFollow(retained::applied);

        // Metadata now, so no routing write waits for it (or fails on it) while Kafka is busy.
        clusterProducer.partitions(topics.devicePersisted());
        ConnectSequencer sequencer = new ConnectSequencer(nodeId, topics, clusterProducer, membership, directory,
                sessionsFollower, publishLog, drops, timers, System::currentTimeMillis,
                clusterProducer.partitions(topics.sessionEvents()), requestTimeout, deviceQueues);
        membership.onDeath(sequencer::nodeDied);
        sequencer.appTopics(appTopics);
        sequencer.localCommands(this::command); // this node's own answers skip its node topic
        sequencer.meters(meters);
        sequence = new GroupConsumer<>(kafka, meters, topics.sessionEvents(),
                kafka.settings().topicPrefix() + "session-sequence", "session-events", ClusterCodec::decodeEvent,
                sequencer::handle, GroupConsumer.Hooks.none()
                        .withBeforeCommit(sequencer::flushed)
                        // Events read again after a failover are decided once (their decided-at offsets).
                        .withCommitInterval(PublishConsumer.COMMIT_INTERVAL)
                        .withOwnership(sequencer::ownership)
                        .withIdle(sequencer::idle, Duration.ofMillis(100))
                        .withSessionTimeout(cluster.nodeTimeout())
                        .withSupervisor(loops)
                        .withDeadLetters(new DeadLetters(clusterProducer, topics, meters, requestTimeout)));
        sequence.start();

        SharedBacklogSweeper sweeper = new SharedBacklogSweeper(appTopics, directory, subscriptions,
                config.applicationSharedGrace(), System::currentTimeMillis);
        long sweepEvery = SharedBacklogSweeper.interval(config.applicationSharedGrace()).toMillis();
        timers.scheduleWithFixedDelay(sweeper::sweep, sweepEvery, sweepEvery, java.util.concurrent.TimeUnit.MILLISECONDS);

        DeviceQueueWriter queueWriter = new DeviceQueueWriter(deviceQueues, directory, membership, clusterProducer,
                topics, drops, requestTimeout, nodeId, this::command, backpressure);
        queueWriter.meters(meters);
        live.enabled(config.deviceLiveDelivery());
        live.ackWait(config.deviceLiveAckWait());
        live.meters(meters);
        // Records a node reads again after taking a partition over are older than the node timeout.
        queueWriter.live(live, cluster.nodeTimeout().dividedBy(2));
        devicePersisted = new GroupConsumer<>(kafka, meters, topics.devicePersisted(),
                kafka.settings().topicPrefix() + "device-persisted", "device-persisted", DeviceQueueWriter.Stored::decode,
                queueWriter::handle, GroupConsumer.Hooks.none()
                        .withBeforeCommit(queueWriter::flushed)
                        // A hand-off queued again is recognised by its source position.
                        .withCommitInterval(PublishConsumer.COMMIT_INTERVAL)
                        .withSessionTimeout(cluster.nodeTimeout())
                        .withSupervisor(loops)
                        .withDeadLetters(new DeadLetters(clusterProducer, topics, meters, requestTimeout)));
        devicePersisted.start();

        NodeInbox nodeInbox = inbox;
        consumer = new PublishConsumer(kafka, meters, this::route,
                owned -> {
                    routingOrder.owned(owned);
                    drainDownlinks(owned, admin, topics.downlink(nodeId), downlinkPartitions, nodeInbox,
                            requestTimeout);
                },
                this::routed, cluster.nodeTimeout(), loops, deadLetters);
        consumer.start();

        PublishConsumer routing = consumer;
        gauges.add(Gauge.builder("fleetmq.publish.routing.backlog", routing, PublishConsumer::lag)
                .description("PUBLISH records in the partitions this node routes that it has not read yet")
                .register(meters));
        gauges.add(Gauge.builder("fleetmq.sessions", sessions, SessionRegistry::size)
                .description("Sessions on this node, connected or not").register(meters));
        gauges.add(Gauge.builder("fleetmq.cluster.sessions", directory, SessionDirectory::size)
                .description("Sessions in the cluster, connected or not").register(meters));
        gauges.add(Gauge.builder("fleetmq.cluster.nodes", membership, m -> m.liveNodes().size())
                .description("Live nodes of the cluster, this one included").register(meters));
        gauges.add(Gauge.builder("fleetmq.cluster.heartbeat.age.seconds", membership,
                        m -> m.heartbeatAge().toNanos() / 1e9)
                .description("Time since this node's newest confirmed heartbeat was sent; the node fences"
                        + " itself at two thirds of the node timeout")
                .register(meters));
        gauges.add(Gauge.builder("fleetmq.subscriptions", subscriptions, SubscriptionTrie::size)
                .description("Subscriptions in the node's trie (the whole cluster's)").register(meters));
        gauges.add(Gauge.builder("fleetmq.retained.messages", retained, RetainedIndex::size)
                .description("Retained messages known to the node").register(meters));
        gauges.add(Gauge.builder("fleetmq.retained.bytes", retained, RetainedIndex::bytes)
                .description("Bytes of the retained messages known to the node, as the retained limits weigh them")
                .register(meters));
        gauges.addAll(io.fleetmq.app.metrics.SessionCounts.register(meters, sessions::countByTypeAndState));
        gauges.add(Gauge.builder("fleetmq.application.backlog.lag", appBacklogs, AppBacklogs::lag)
                .description("Records of the open APPLICATION backlogs not yet handed to their sessions")
                .register(meters));
        gauges.add(Gauge.builder("fleetmq.application.backlog.largest.lag", appBacklogs, AppBacklogs::largestLag)
                .description("Records not yet handed to its session of the open APPLICATION backlog furthest behind")
                .register(meters));
        io.fleetmq.app.metrics.DeviceQueueDepth depth = new io.fleetmq.app.metrics.DeviceQueueDepth(
                () -> sessions.all().stream().filter(SessionActor::queuesInRedis).map(SessionActor::clientId)::iterator,
                deviceQueues::size, DEVICE_QUEUES_SAMPLED);
        gauges.addAll(depth.register(meters));
        timers.scheduleWithFixedDelay(depth::sample, 0, DEVICE_QUEUE_SAMPLE_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
        // One series per publish partition (a bounded number; the topic's, which an existing topic
        // keeps over the configured one): 0 where another node routes.
        int publishPartitions = clusterProducer.partitions(topics.publish());
        for (int p = 0; p < publishPartitions; p++) {
            int partition = p;
            gauges.add(Gauge.builder("fleetmq.publish.routing.lag", routing, c -> c.lag(partition))
                    .description("PUBLISH records of this publish partition that this node routes and has not read yet")
                    .tag("partition", Integer.toString(p)).register(meters));
        }
    }

    /** How often the DEVICE queues' lengths are read from Redis for the metrics, and how many at most. */
    private static final long DEVICE_QUEUE_SAMPLE_SECONDS = 15;
    private static final int DEVICE_QUEUES_SAMPLED = 10_000;

    private final java.util.concurrent.CopyOnWriteArrayList<Runnable> fenceListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Called once, from the membership thread, when this incarnation fences itself. */
    void onFenced(Runnable listener) {
        fenceListeners.add(listener);
        if (membership.fenced()) {
            listener.run(); // fenced before anyone listened; the listener ignores a second call
        }
    }

    /**
     * Fences this incarnation for {@code reason} (say, a background loop that cannot recover): the
     * node stops serving and comes back as a new incarnation, as when it loses Kafka.
     */
    void fence(String reason) {
        membership.fence(reason);
    }

    /** This incarnation's identity in the cluster. */
    long incarnation() {
        return membership.incarnation();
    }

    /** A command of the node topic: a drain is for the node, the others for a session. */
    private void command(io.fleetmq.core.cluster.NodeCommand command) {
        if (command instanceof io.fleetmq.core.cluster.NodeCommand.Drain d) {
            if (local.draining(d.drain())) {
                log.info("Node {} {} at the request of node {}", config.nodeId(),
                        d.drain() ? "drains: its clients are sent to other nodes and new ones refused"
                                : "is undrained: it takes clients again", d.requestedBy());
            }
            if (d.drain()) {
                sessions.drain(config.cluster().shutdownServerReference());
            } else {
                sessions.undrain();
            }
            membership.beatNow(); // the cluster sees the new state at once, not at the next heartbeat
            return;
        }
        sessions.command(command);
    }

    /**
     * Asks node {@code nodeId} (this one too) through its node topic to drain or to take clients
     * again, as the connect sequence tells a node of its sessions.
     *
     * @return completes once Kafka stored the command
     */
    java.util.concurrent.CompletableFuture<?> sendDrain(String nodeId, boolean drain) {
        return clusterProducer.send(topics.node(nodeId), nodeId, ClusterCodec.encode(
                new io.fleetmq.core.cluster.NodeCommand.Drain(drain, config.nodeId())));
    }

    /** The retained messages this node knows: the whole cluster's, with this node's pending changes. */
    RetainedIndex<BrokerMessage> retained() {
        return retained;
    }

    PublishLog publishLog() {
        return publishLog;
    }

    /** Whether this incarnation fenced itself off the cluster. */
    boolean fenced() {
        return fenced || membership.fenced();
    }

    private void route(PublishedRecord record) {
        routingOrder.read(record.partition(), record.offset(), () -> {
            routingDelay.saw(record.message().createdAtMillis());
            retainedRouting.route(record);
            router.route(record.message(), record.partition(), record.offset());
        });
    }

    /**
     * The routing consumer's barrier: every write of the batch is stored (or, where Kafka can never
     * take it, in the dead-letter topic); false routes the batch again.
     */
    private boolean routed() {
        boolean retainedStored = retainedRouting.flushed();
        boolean done = router.flushed() && retainedStored;
        if (done) {
            routingDelay.done();
        }
        return done;
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

    /** The admin API's view of the sessions. */
    SessionsAdapter sessionsView() {
        return sessionsView;
    }

    SessionRegistry sessions() {
        return sessions;
    }

    Membership membership() {
        return membership;
    }

    /** The cluster's sessions as this node follows them. */
    SessionDirectory directory() {
        return directory;
    }

    /** The cluster's subscriptions as this node follows them. */
    SubscriptionTrie subscriptions() {
        return subscriptions;
    }

    /** The backlog topics of persistent APPLICATION clients and shared subscriptions. */
    AppTopics appTopics() {
        return appTopics;
    }

    /** Clients connected to this node now. */
    long connections() {
        return sessions.all().stream().filter(SessionActor::isOnline).count();
    }

    /** Subscriptions of the sessions on this node. */
    long localSubscriptions() {
        long n = 0;
        for (SessionActor actor : sessions.all()) {
            n += subscriptions.subscriptionsOf(actor.clientId()).size();
        }
        return n;
    }

    /**
     * The supervisor of this node's background loops: a readiness check (down once a loop gave up)
     * and the place to hook the node's fencing ({@link LoopSupervisor#onGiveUp}).
     */
    LoopSupervisor loops() {
        return loops;
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
                if (membership.fenced() || fenced) {
                    return HealthStatus.down("fenced off the cluster (" + membership.fenceReason()
                            + "); rejoining as a new incarnation");
                }
                if (!membership.serving()) {
                    return HealthStatus.down("no heartbeat confirmed for " + membership.heartbeatAge().toMillis() + " ms");
                }
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
    /**
     * This incarnation fenced itself: its clients are sent to other nodes (0x9C), and everything
     * that reads from or writes to Kafka on its behalf stops at once, without waiting for Kafka
     * (which may be unreachable). What stays is the session registry, whose actors refuse new
     * CONNECTs with 0x88 until a new incarnation takes over; {@link #close()} ends that.
     */
    void fence() {
        fenced = true;
        sessions.fence(config.cluster().shutdownServerReference());
        removeGauges();
        stopClusterWork(Duration.ofSeconds(1));
    }

    private void removeGauges() {
        gauges.forEach(meters::remove);
        gauges.clear();
    }

    private void stopClusterWork(Duration producerWait) {
        if (clusterWorkStopped) {
            return;
        }
        clusterWorkStopped = true;
        // The consumers leave their groups in parallel: each may wait for Kafka up to its timeout.
        java.util.List<java.util.concurrent.CompletableFuture<Void>> leaving = new java.util.ArrayList<>();
        for (AutoCloseable c : new AutoCloseable[] {consumer, sequence, devicePersisted}) {
            if (c != null) {
                leaving.add(java.util.concurrent.CompletableFuture.runAsync(() -> {
                    try {
                        c.close();
                    } catch (Exception e) {
                        log.warn("Closing a consumer failed: {}", e.toString());
                    }
                }));
            }
        }
        leaving.forEach(java.util.concurrent.CompletableFuture::join);
        membership.close();
        while (!closeables.isEmpty()) {
            try {
                closeables.pop().close();
            } catch (Exception e) {
                log.warn("Closing failed: {}", e.toString());
            }
        }
        clusterProducer.close(producerWait);
        publishLog.close(producerWait);
        retainedStore.close();
    }

    @Override
    public void close() {
        removeGauges();
        if (fenced) {
            stopClusterWork(Duration.ofSeconds(1)); // idempotent: what fence() stopped stays stopped
            stopActors();
            return;
        }
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
        if (membership.serving()) {
            clusterProducer.flush(); // the disconnects reach the connect sequence before the node leaves
        }
        stopClusterWork(Duration.ofSeconds(10));
        stopActors();
    }

    private void stopActors() {
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
