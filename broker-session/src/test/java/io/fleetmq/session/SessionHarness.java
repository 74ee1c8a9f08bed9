package io.fleetmq.session;

import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.retained.RetainedIndex;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.session.cluster.ClientTypes;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;

/**
 * One node's sessions with everything around them in memory: actor turns and timers that run when
 * the test says, a connect sequence that answers in order, a publish log the test confirms, and
 * (optionally) DEVICE queues. Used from the test thread only.
 */
final class SessionHarness {

    static final String NODE = "node-1";

    final ManualExecutor actors = new ManualExecutor();
    final ManualScheduler timers = new ManualScheduler();
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final MqttLimits limits;
    final InMemoryConnectSequence sequence = new InMemoryConnectSequence(actors);
    final FakePublishLog publishLog = new FakePublishLog();
    final InMemoryDeviceQueues deviceQueues;
    final SubscriptionTrie subscriptions = new SubscriptionTrie();
    final RetainedIndex<BrokerMessage> retained = new RetainedIndex<>();
    final SessionRegistry registry;
    /** Off unless made with {@link #withBackpressure}; its clock is {@link #timers}'. */
    final DeliveryBackpressure backpressure;
    long now = 1_000_000L;

    /** Without DEVICE queues: persistent sessions keep their messages in memory. */
    SessionHarness() {
        this(MqttLimits.defaults(), false);
    }

    SessionHarness(MqttLimits limits, boolean withDeviceQueues) {
        this(limits, withDeviceQueues, null, null);
    }

    /** With APPLICATION backlogs for the client IDs that match {@code applicationPattern}. */
    SessionHarness(MqttLimits limits, boolean withDeviceQueues, AppBacklogStore appBacklogs, String applicationPattern) {
        this(limits, withDeviceQueues, appBacklogs, applicationPattern, SessionGuard.ALLOW_ALL);
    }

    /** With {@code guard} deciding CONNECTs and the clients' rights. */
    SessionHarness(SessionGuard guard) {
        this(MqttLimits.defaults(), false, null, null, guard);
    }

    private SessionHarness(MqttLimits limits, boolean withDeviceQueues, AppBacklogStore appBacklogs,
            String applicationPattern, SessionGuard guard) {
        this(limits, withDeviceQueues, appBacklogs, applicationPattern, guard, null, null);
    }

    private SessionHarness(MqttLimits limits, boolean withDeviceQueues, AppBacklogStore appBacklogs,
            String applicationPattern, SessionGuard guard, java.time.Duration backpressureDelay,
            java.time.Duration backpressureMaxWait) {
        this.limits = limits;
        this.deviceQueues = withDeviceQueues ? new InMemoryDeviceQueues() : null;
        this.backpressure = backpressureDelay == null ? DeliveryBackpressure.OFF
                : new DeliveryBackpressure(backpressureDelay, backpressureMaxWait, timers, timers::nanoTime, meters);
        SessionServices services = new SessionServices(NODE, limits, publishLog, null, subscriptions, retained,
                actors, timers, meters, new MessageDrops(meters), () -> now, sequence, deviceQueues,
                new ClientTypes(applicationPattern), appBacklogs, null, guard, backpressure);
        registry = new SessionRegistry(services);
        backpressure.localPublishers(clientId -> registry.get(clientId) != null);
        sequence.registry = registry;
    }

    /** With publisher backpressure: deliveries later than {@code delay} hold PUBLISH packets, {@code maxWait} at most. */
    static SessionHarness withBackpressure(java.time.Duration delay, java.time.Duration maxWait) {
        return new SessionHarness(MqttLimits.defaults(), false, null, null, SessionGuard.ALLOW_ALL, delay, maxWait);
    }

    /** Moves the wall clock and the timers on together, and runs what became due. */
    void advance(long millis) {
        now += millis;
        timers.advance(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
        actors.runAll();
    }

    /** Sends a CONNECT and runs the actors until it is answered; returns the connection. */
    RecordingConnection connect(String clientId, boolean cleanStart, long sessionExpiry, int receiveMaximum) {
        RecordingConnection c = connectOnly(clientId, cleanStart, sessionExpiry, receiveMaximum);
        actors.runAll();
        return c;
    }

    /** Sends a CONNECT without running anything. */
    RecordingConnection connectOnly(String clientId, boolean cleanStart, long sessionExpiry, int receiveMaximum) {
        RecordingConnection c = new RecordingConnection();
        registry.connect(connectPacket(clientId, cleanStart, sessionExpiry, receiveMaximum, null), c);
        return c;
    }

    static Packet.Connect connectPacket(String clientId, boolean cleanStart, long sessionExpiry, int receiveMaximum,
            Packet.Will will) {
        return new Packet.Connect(ProtocolVersion.V5, clientId, cleanStart, 60, null, null, will, sessionExpiry,
                receiveMaximum, 0, 0, false, true, null, List.of());
    }

    SessionActor session(String clientId) {
        return registry.get(clientId);
    }

    /** Sends a packet from {@code c} and runs the actors. */
    void send(String clientId, RecordingConnection c, Packet packet) {
        if (packet instanceof Packet.Ack a && (a.type() == Packet.AckType.PUBACK || a.type() == Packet.AckType.PUBCOMP)) {
            c.acknowledged.add(a.packetId());
        }
        registry.get(clientId).packet(c, packet);
        actors.runAll();
    }

    void subscribe(String clientId, RecordingConnection c, String filter, int qos) {
        send(clientId, c, new Packet.Subscribe(1, 0, List.of(new Packet.TopicSubscription(filter, qos, false, false, 0)),
                List.of()));
    }

    /** The connection ends without DISCONNECT. */
    void lose(String clientId, RecordingConnection c) {
        registry.get(clientId).connectionLost(c);
        actors.runAll();
    }

    /** Routes a message to the session directly (in memory), as the router does for a session on this node. */
    void deliver(String clientId, BrokerMessage m, int subscribedQos) {
        registry.get(clientId).deliver(m, List.of(subscription(clientId, subscribedQos)));
        actors.runAll();
    }

    /** Appends a message to the client's DEVICE queue and tells the session, as the router does. */
    long queue(String clientId, BrokerMessage m, int subscribedQos) {
        Downlink d = new Downlink(0, 0, m, List.of(subscription(clientId, subscribedQos)));
        long seq = deviceQueues.append(clientId, d);
        registry.command(new NodeCommand.Queued(clientId, seq, d));
        actors.runAll();
        return seq;
    }

    static Subscription subscription(String clientId, int qos) {
        return new Subscription(clientId, "t/#", null, qos, false, false, 0, 0, NODE);
    }

    BrokerMessage message(String topic, int qos) {
        return new BrokerMessage(topic, new byte[] {1}, qos, false, "pub", now, BrokerMessage.NO_EXPIRY,
                BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null, List.of());
    }

    static Packet.Publish publish(String topic, int qos, int packetId, boolean dup) {
        return new Packet.Publish(topic, 0, new byte[] {1}, qos, false, dup, packetId, -1, -1, null, null, null,
                List.of(), List.of());
    }

    static Packet.Ack ack(Packet.AckType type, int packetId) {
        return new Packet.Ack(type, packetId, ReasonCode.SUCCESS, null);
    }

    double dropped(String reason) {
        Counter c = meters.find("fleetmq.messages.dropped").tag("reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    /** Every drop counted, whatever the reason. */
    double droppedTotal() {
        return meters.find("fleetmq.messages.dropped").counters().stream().mapToDouble(Counter::count).sum();
    }
}
