package io.fleetmq.session;

import io.fleetmq.core.actor.Mailbox;
import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.app.AppBacklog;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.session.cluster.ClientTypes;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.Packet.Ack;
import io.fleetmq.core.mqtt.Packet.AckType;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.SharedSubscription;
import io.fleetmq.core.topic.TopicNames;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client session and, while the client is connected, its connection: the MQTT state machine
 * of DESIGN.md "The client actor". Every input (packets, deliveries, Kafka callbacks, timers)
 * arrives through the mailbox, so the fields below are touched by one thread at a time and need
 * no locks.
 */
public final class SessionActor {

    private static final Logger log = LoggerFactory.getLogger(SessionActor.class);
    private static final long NEVER_EXPIRES = 0xFFFF_FFFFL;
    /** Deliveries taken from the inbox per turn; the rest wait for the actor's next turn. */
    static final int DELIVERIES_PER_TURN = 1024;

    private final String clientId;
    private final SessionServices services;
    private final SessionRegistry registry;
    private final Mailbox mailbox;
    /** Read by other threads (routing shared subscriptions); written only by the actor. */
    private volatile boolean online;
    private volatile boolean ended;
    /** CONNECTs told to the mailbox and not yet processed; while any is, the session does not end. */
    private final java.util.concurrent.atomic.AtomicInteger connectsPending = new java.util.concurrent.atomic.AtomicInteger();

    // ---- the connection (null while offline)
    private ClientConnection connection;
    private ProtocolVersion version = ProtocolVersion.V5;
    private boolean problemInformation = true;
    private int clientReceiveMaximum = 65_535;
    private long clientMaximumPacketSize;
    private int clientTopicAliasMaximum;
    private final Map<String, Integer> outboundAliases = new HashMap<>();
    private final Map<Integer, String> inboundAliases = new HashMap<>();
    /** QoS 1/2 PUBLISH received and not yet acknowledged by us (Receive Maximum, [MQTT-3.3.4-9]). */
    private int inboundUnacknowledged;
    /** Written to since the last flush; flushed at the end of the turn. */
    private ClientConnection unflushed;

    // ---- deliveries from the router (any thread) on their way into the actor
    private final ConcurrentLinkedQueue<Routed> inbox = new ConcurrentLinkedQueue<>();
    /** Deliveries in the inbox; bounds what a slow subscriber piles up. */
    private final java.util.concurrent.atomic.AtomicInteger deliveriesPending = new java.util.concurrent.atomic.AtomicInteger();
    /** Set while a task that takes from the inbox is told or running; only its winner tells one. */
    private final java.util.concurrent.atomic.AtomicBoolean inboxScheduled = new java.util.concurrent.atomic.AtomicBoolean();
    private final Runnable takeFromInbox = this::takeFromInbox;
    /** The inbox still held deliveries when this turn's share was taken; the end of the turn tells the next. */
    private boolean inboxBacklog;

    // ---- the session (survives reconnects until it ends)
    private long sessionExpirySeconds;
    private Packet.Will will;
    private ScheduledFuture<?> willTimer;
    private ScheduledFuture<?> expiryTimer;
    private final Map<String, Subscription> subscriptions = new HashMap<>();
    /** QoS 2 packet IDs received from the client and not yet released, kept in Redis for a persistent session. */
    private final InboundQos2 inboundQos2;
    /** QoS 1/2 sent and not yet completed, in send order, for resending on reconnect [MQTT-4.4.0-1]. */
    private final LinkedHashMap<Integer, InFlight> inFlight = new LinkedHashMap<>();
    /** QoS 1/2 waiting for room in the client's receive window (or for the client to come back). */
    private final ArrayDeque<Delivery> queued = new ArrayDeque<>();
    /** QoS 0 held while the socket is not writable. */
    private final ArrayDeque<Delivery> qos0Queued = new ArrayDeque<>();
    private int lastPacketId;

    // ---- the DEVICE queue in Redis, for a persistent DEVICE session
    private String clientType = ClientTypes.DEVICE;
    private boolean deviceQueue;
    /** The highest queue entry read or delivered while connected. */
    private long queueSeq;
    private boolean queueReading;
    /** Entries may wait in Redis beyond {@link #queueSeq}. */
    private boolean queueBehind;

    // ---- the backlogs in Kafka of a persistent APPLICATION session, read while it is connected
    /** The client's own backlog topic. */
    private AppBacklog appBacklog;
    /** The backlogs of its shared subscriptions, by the filter as subscribed ({@code $share/g/f}). */
    private final Map<String, AppBacklog> sharedBacklogs = new HashMap<>();
    /** The subscription each shared backlog is read for. */
    private final Map<AppBacklog, Subscription> sharedSubscriptions = new HashMap<>();
    /** Where delivery stands in each partition read, per backlog. */
    private final Map<AppBacklog, Map<Integer, Cursor>> cursors = new HashMap<>();
    /** Backlog records waiting for room in the client's receive window, in the order they came. */
    private final ArrayDeque<Waiting> appWaiting = new ArrayDeque<>();

    /** One partition of a backlog as this session delivers it. */
    private static final class Cursor {
        final AppBacklog backlog;
        final int partition;
        /** Offsets handed to this session and not yet delivered (sent at QoS 0, acknowledged at 1/2). */
        final java.util.TreeSet<Long> open = new java.util.TreeSet<>();
        /** The offset after the highest one handed over. */
        long next = -1;
        long lastSent = -1;
        long committed = -1;

        Cursor(AppBacklog backlog, int partition) {
            this.backlog = backlog;
            this.partition = partition;
        }
    }

    private record Waiting(AppBacklog from, AppBacklog.Record record) {
    }

    // ---- the cluster
    /** The connect sequence's number of the current (or last) connection; 0 before the first. */
    private long epoch;
    /** CONNECTs waiting for the connect sequence's answer, by request ID, in arrival order. */
    private final LinkedHashMap<String, PendingConnect> pendingConnects = new LinkedHashMap<>();
    /** Packets waiting, in order, for the Kafka producer to have room (back-pressure); null when none wait. */
    private ArrayDeque<Runnable> held;

    /** A CONNECT sent to the connect sequence; what its connection does meanwhile waits in {@code deferred}. */
    private record PendingConnect(ClientConnection conn, Packet.Connect connect, String assignedClientId,
                                  List<Runnable> deferred, ScheduledFuture<?> timeout) {
    }

    /** A message the router handed over, with this client's subscriptions that matched it. */
    private record Routed(BrokerMessage message, List<Subscription> matched) {
    }

    /** A message on its way to this client, with the options of the subscriptions that matched. */
    private record Delivery(BrokerMessage message, int qos, boolean retain, List<Integer> subscriptionIds) {
    }

    /**
     * A QoS 1/2 PUBLISH sent; {@code released} once PUBREC came and PUBREL went out; {@code seq} its
     * entry in the session's DEVICE queue in Redis, 0 if it is not from there.
     */
    private record InFlight(Packet.Publish publish, boolean released, long seq, Cursor cursor, long appOffset) {
    }

    SessionActor(String clientId, SessionServices services, SessionRegistry registry) {
        this.clientId = clientId;
        this.services = services;
        this.registry = registry;
        this.mailbox = new Mailbox(services.actorPool(), "session " + clientId, this::endOfTurn);
        this.inboundQos2 = new InboundQos2(clientId, services.qos2Receipts(), services.meters());
    }

    public String clientId() {
        return clientId;
    }

    /** Whether a client is connected to this session now; may lag by one mailbox step. */
    public boolean isOnline() {
        return online;
    }

    // ======================================================================== inputs (any thread)

    /**
     * Queues a CONNECT for this session. Called by the registry under its lock for this client ID,
     * so it never interleaves with {@link SessionRegistry#tryEnd}: an actor that has a CONNECT queued
     * does not end, and the connection's packets keep going to the actor that answers them.
     */
    void attach(ClientConnection conn, Packet.Connect connect, String assignedClientId) {
        connectsPending.incrementAndGet();
        mailbox.tell(() -> {
            connectsPending.decrementAndGet();
            onConnect(conn, connect, assignedClientId);
        });
    }

    /**
     * Whether a CONNECT is queued and not yet processed, or waits for the connect sequence's answer;
     * read by the registry under its lock, from this actor's own turn.
     */
    boolean hasConnectPending() {
        return connectsPending.get() > 0 || !pendingConnects.isEmpty();
    }

    /** The session is over and out of the registry: nothing more is accepted. Called by the registry under its lock. */
    void close() {
        ended = true;
        mailbox.close();
    }

    /** A packet from {@code conn} (after its CONNECT). */
    public void packet(ClientConnection conn, Packet packet) {
        mailbox.tell(() -> onPacketFrom(conn, packet));
    }

    private void onPacketFrom(ClientConnection conn, Packet packet) {
        if (conn != connection) {
            // From a connection still waiting for its CONNACK (it may send before [MQTT-3.1.4-5 note]),
            // or from one this session already dropped (taken over or closed).
            defer(conn, () -> onPacketFrom(conn, packet));
            return;
        }
        if (held != null) {
            held.add(() -> onPacketFrom(conn, packet)); // in order behind a PUBLISH that waits for room
            return;
        }
        if (packet instanceof Packet.Publish && !services.publishLog().hasRoom()) {
            // Kafka's producer is full (Kafka slow or away): rather than block a shared actor thread
            // in the write, this session waits. Its unsettled PUBLISH packets make the transport stop
            // reading the socket, so the publisher is slowed down by TCP.
            held = new ArrayDeque<>();
            held.add(() -> onPacketFrom(conn, packet));
            services.meters().counter("fleetmq.publish.waits").increment();
            services.publishLog().whenRoom(() -> mailbox.tell(this::releaseHeld));
            return;
        }
        if (packet instanceof Packet.Subscribe s && applicationBacklogs()) {
            List<java.util.concurrent.CompletableFuture<Boolean>> creating = ensureSharedBacklogs(s);
            if (!creating.isEmpty()) {
                // The first member of a shared APPLICATION subscription on this node: its backlog topic
                // is made (or found) without blocking this thread; the session's packets wait, in order.
                held = new ArrayDeque<>();
                held.add(() -> process(conn, packet));
                java.util.concurrent.CompletableFuture.allOf(creating.toArray(java.util.concurrent.CompletableFuture[]::new))
                        .whenComplete((v, e) -> mailbox.tell(this::releaseHeld));
                return;
            }
        }
        process(conn, packet);
    }

    private void process(ClientConnection conn, Packet packet) {
        if (conn != connection) {
            return; // the connection ended while its packet waited
        }
        try {
            onPacket(packet);
        } catch (ProtocolViolation v) {
            disconnect(v.reasonCode(), v.getMessage(), true);
        }
    }

    /** Starts making the backlog topics of the shared subscriptions in {@code s} this node does not know yet. */
    private List<java.util.concurrent.CompletableFuture<Boolean>> ensureSharedBacklogs(Packet.Subscribe s) {
        List<java.util.concurrent.CompletableFuture<Boolean>> creating = new ArrayList<>();
        for (Packet.TopicSubscription t : s.subscriptions()) {
            SharedSubscription shared;
            try {
                shared = SharedSubscription.parse(t.filter());
            } catch (InvalidTopicException e) {
                continue; // answered in onSubscribe
            }
            if (shared != null && !services.appBacklogs().sharedKnown(shared.group(), shared.filter())) {
                creating.add(services.appBacklogs().ensureSharedAsync(shared.group(), shared.filter()));
            }
        }
        return creating;
    }

    /** The producer has room again: the held packets go on, in order, until one has to wait again. */
    private void releaseHeld() {
        ArrayDeque<Runnable> waiting = held;
        held = null;
        while (waiting != null && !waiting.isEmpty()) {
            waiting.poll().run();
            if (held != null) {
                held.addAll(waiting); // held again: the rest stays behind, in order
                return;
            }
        }
    }

    /** Holds {@code again} until {@code conn}'s CONNECT is decided; false if {@code conn} is not waiting. */
    private boolean defer(ClientConnection conn, Runnable again) {
        for (PendingConnect p : pendingConnects.values()) {
            if (p.conn() == conn) {
                p.deferred().add(again);
                return true;
            }
        }
        return false;
    }

    /** The transport found a protocol violation in what {@code conn} sent: end it with {@code code}. */
    public void violation(ClientConnection conn, ReasonCode code, String reason) {
        mailbox.tell(() -> onViolation(conn, code, reason));
    }

    private void onViolation(ClientConnection conn, ReasonCode code, String reason) {
        if (conn == connection) {
            disconnect(code, reason, true);
        } else if (!defer(conn, () -> onViolation(conn, code, reason))) {
            conn.sendAndClose(null);
        }
    }

    /** The network connection ended without DISCONNECT, or the transport closed it. */
    public void connectionLost(ClientConnection conn) {
        mailbox.tell(() -> onConnectionLost(conn));
    }

    private void onConnectionLost(ClientConnection conn) {
        if (conn == connection) {
            detach(true);
        } else {
            defer(conn, () -> onConnectionLost(conn));
        }
    }

    /** Nothing arrived within 1.5 times the keep-alive [MQTT-3.1.2-22]. */
    public void keepAliveExpired(ClientConnection conn) {
        mailbox.tell(() -> onKeepAliveExpired(conn));
    }

    private void onKeepAliveExpired(ClientConnection conn) {
        if (conn == connection) {
            disconnect(ReasonCode.KEEP_ALIVE_TIMEOUT, "keep alive timeout", true);
        } else {
            defer(conn, () -> onKeepAliveExpired(conn));
        }
    }

    /** The socket can take more data: send what QoS 0 traffic was held back. */
    public void writable(ClientConnection conn) {
        mailbox.tell(() -> {
            if (conn == connection) {
                drainQos0();
            }
        });
    }

    /** A message routed to this client; {@code matched} are its subscriptions that matched. */
    public void deliver(BrokerMessage message, List<Subscription> matched) {
        MqttLimits limits = services.limits();
        if (deliveriesPending.get() >= limits.maxQueuedMessages() + limits.maxQueuedQos0()) {
            // The session cannot keep up: drop here rather than grow the mailbox without bound.
            services.drops().count(message.qos() == 0 ? MessageDrops.Reason.QOS0_QUEUE_FULL
                    : MessageDrops.Reason.SESSION_QUEUE_FULL);
            return;
        }
        deliveriesPending.incrementAndGet();
        inbox.offer(new Routed(message, matched));
        if (inboxScheduled.compareAndSet(false, true) && !mailbox.tell(takeFromInbox)) {
            discardInbox();
        }
    }

    /** The mailbox is closed (the session ended): what waits in the inbox is counted as dropped. */
    private void discardInbox() {
        inboxScheduled.set(false);
        for (Routed r = inbox.poll(); r != null; r = inbox.poll()) {
            deliveriesPending.decrementAndGet();
            services.drops().count(MessageDrops.Reason.NO_SESSION);
        }
    }

    /** Takes this turn's share of the inbox; the rest waits for the next turn (see {@link #endOfTurn}). */
    private void takeFromInbox() {
        try {
            for (int i = 0; i < DELIVERIES_PER_TURN; i++) {
                Routed r = inbox.poll();
                if (r == null) {
                    break;
                }
                deliveriesPending.decrementAndGet();
                try {
                    onDeliver(r.message(), r.matched());
                } catch (RuntimeException e) {
                    services.drops().count(MessageDrops.Reason.DELIVERY_FAILED);
                    log.warn("{}: a delivery failed; continuing with the next", clientId, e);
                }
            }
        } finally {
            if (!inbox.isEmpty()) {
                inboxBacklog = true; // stays scheduled: no other take is told meanwhile
            } else {
                inboxScheduled.set(false);
                // A delivery that arrived between the last poll and the line above found the flag still set.
                if (!inbox.isEmpty() && inboxScheduled.compareAndSet(false, true)) {
                    inboxBacklog = true;
                }
            }
        }
    }

    /**
     * After every mailbox turn: the next share of a delivery backlog goes behind the other actors'
     * turns, and what the turn wrote is flushed at once.
     */
    private void endOfTurn() {
        if (inboxBacklog) {
            inboxBacklog = false;
            if (!mailbox.tell(takeFromInbox)) {
                discardInbox();
            }
        }
        flush();
    }

    /** The connect sequence's answer to one of this session's CONNECTs. */
    void accepted(NodeCommand.ConnectAccepted answer) {
        mailbox.tell(() -> onAccepted(answer));
    }

    /** Another node took this client ID over. */
    void takenOver(NodeCommand.TakeOver command) {
        mailbox.tell(() -> onTakenOver(command));
    }

    /** The session's DEVICE queue in Redis grew by an entry. */
    void queued(NodeCommand.Queued command) {
        mailbox.tell(() -> onQueued(command));
    }

    /**
     * The node stops: 0x8B Server shutting down, or 0x9C Use another server with {@code serverReference}
     * when one is configured.
     */
    void serverShutdown(String serverReference) {
        mailbox.tell(() -> {
            ClientConnection conn = connection;
            if (conn == null) {
                return;
            }
            // The client did nothing wrong: its will is not published on our shutdown, and its
            // session stays for it to resume elsewhere [MQTT-3.14.2].
            if (serverReference == null) {
                disconnect(ReasonCode.SERVER_SHUTTING_DOWN, "server shutting down", false);
                return;
            }
            detach(false);
            conn.sendAndClose(conn.version().isV5() ? new Packet.Disconnect(ReasonCode.USE_ANOTHER_SERVER, -1,
                    reasonString("server shutting down; use " + serverReference), serverReference) : null);
        });
    }

    /**
     * This node fenced itself off the cluster: the client is sent elsewhere (0x9C Use another
     * server, with {@code serverReference} when one is configured) and CONNECTs still waiting for the
     * connect sequence are refused with 0x88. As on a shutdown, no will is published here: the
     * client did nothing wrong and is expected to reconnect to another node at once.
     */
    void fenced(String serverReference) {
        mailbox.tell(() -> {
            for (String requestId : List.copyOf(pendingConnects.keySet())) {
                PendingConnect p = pendingConnects.remove(requestId);
                p.timeout().cancel(false);
                p.conn().sendAndClose(Packet.ConnAck.refuse(ReasonCode.SERVER_UNAVAILABLE,
                        "this node is fenced off from the cluster; connect to another node"));
            }
            ClientConnection conn = connection;
            if (conn == null) {
                return;
            }
            detach(false);
            conn.sendAndClose(conn.version().isV5() ? new Packet.Disconnect(ReasonCode.USE_ANOTHER_SERVER, -1,
                    reasonString("this node is fenced off from the cluster; connect to another node"),
                    serverReference) : null);
        });
    }

    // ======================================================================== CONNECT

    /**
     * Asks the connect sequence (DESIGN.md, promise 3) whether this CONNECT may have the client ID;
     * the CONNACK waits for the answer, so one client ID has one live connection cluster-wide.
     */
    private void onConnect(ClientConnection conn, Packet.Connect connect, String assignedClientId) {
        if (!services.cluster().serving()) {
            // A node that cannot confirm its place in the cluster must not take sessions [MQTT-3.2.2-7].
            conn.sendAndClose(Packet.ConnAck.refuse(ReasonCode.SERVER_UNAVAILABLE,
                    "this node is fenced off from the cluster; connect to another node"));
            if (epoch == 0 && connection == null && pendingConnects.isEmpty()) {
                endHere();
            }
            return;
        }
        String requestId = UUID.randomUUID().toString();
        long expiry = Math.min(requestedExpiry(connect), services.limits().maxSessionExpirySeconds());
        SessionState.PendingWill will = connect.will() == null ? null
                : new SessionState.PendingWill(willMessage(connect.will()), connect.will().delaySeconds());
        ScheduledFuture<?> timeout = services.timers().schedule(() -> mailbox.tell(() -> connectUnanswered(requestId)),
                services.cluster().connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        pendingConnects.put(requestId, new PendingConnect(conn, connect, assignedClientId, new ArrayList<>(), timeout));
        String type = services.clientTypes().of(clientId);
        SessionEvent.Connect event = new SessionEvent.Connect(requestId, clientId, services.nodeId(),
                services.cluster().incarnation(), connect.cleanStart(), expiry, will, type);
        // -- bound on persistent APPLICATION sessions: CONNACK 0x97 (3.1.1: return code 3), counted
        if (expiry > 0 && ClientTypes.APPLICATION.equals(type) && services.appBacklogs() != null
                && !services.cluster().admitsApplicationSession(clientId)) {
            LimitsExceeded.count(services.meters(), LimitsExceeded.APPLICATION_SESSIONS);
            connectRefused(requestId, ReasonCode.QUOTA_EXCEEDED, "the cluster holds its maximum of APPLICATION sessions");
            return;
        }
        // -- end bound
        if (expiry > 0 && ClientTypes.APPLICATION.equals(type) && services.appBacklogs() != null) {
            // The backlog topic exists before the session does, so nothing routed to it can miss it.
            // Created here, asynchronously, rather than on the connect sequence's thread, which a slow
            // topic creation would hold up for every client ID it sequences.
            services.appBacklogs().ensure(clientId).whenComplete((created, e) -> mailbox.tell(() -> {
                if (e == null && created) {
                    askConnectSequence(event);
                } else {
                    connectUnanswered(requestId);
                }
            }));
            return;
        }
        askConnectSequence(event);
    }

    private void askConnectSequence(SessionEvent.Connect event) {
        if (!pendingConnects.containsKey(event.requestId())) {
            return; // timed out or refused meanwhile
        }
        services.cluster().event(event).whenComplete((m, e) -> {
            if (e != null) {
                mailbox.tell(() -> connectUnanswered(event.requestId()));
            }
        });
    }

    /** Refuses a pending CONNECT with {@code code}; a session that never started here ends. */
    private void connectRefused(String requestId, ReasonCode code, String reason) {
        PendingConnect p = pendingConnects.remove(requestId);
        if (p == null) {
            return;
        }
        p.timeout().cancel(false);
        p.conn().sendAndClose(Packet.ConnAck.refuse(code, reason));
        if (epoch == 0 && connection == null && pendingConnects.isEmpty()) {
            endHere();
        }
    }

    /** No answer in time, or the request could not be stored: CONNACK 0x88 [MQTT-3.2.2-7]. */
    private void connectUnanswered(String requestId) {
        PendingConnect p = pendingConnects.remove(requestId);
        if (p == null) {
            return;
        }
        p.timeout().cancel(false);
        log.warn("{}: CONNECT not decided within {}; refused with server unavailable", clientId,
                services.cluster().connectTimeout());
        p.conn().sendAndClose(Packet.ConnAck.refuse(ReasonCode.SERVER_UNAVAILABLE, "cluster did not answer in time"));
        if (epoch == 0 && connection == null && pendingConnects.isEmpty()) {
            endHere(); // never had a connection here: nothing to keep
        }
    }

    private void onAccepted(NodeCommand.ConnectAccepted answer) {
        PendingConnect p = pendingConnects.get(answer.requestId());
        if (p != null && answer.sessionPresent()) {
            // The QoS 2 receipts the session's earlier connections left (on any node) are known
            // before this connection's packets are handled, which wait meanwhile [MQTT-4.3.3-10].
            p.timeout().cancel(false);
            inboundQos2.resume(mailbox::tell, () -> acceptAnswer(answer));
            return;
        }
        acceptAnswer(answer);
    }

    private void acceptAnswer(NodeCommand.ConnectAccepted answer) {
        PendingConnect p = pendingConnects.remove(answer.requestId());
        if (p == null) {
            // Refused here after waiting too long, but accepted by the sequence: say it is gone again.
            SessionEvent.Disconnected gone = new SessionEvent.Disconnected(clientId, answer.epoch(),
                    services.cluster().session(clientId).map(SessionState::sessionExpirySeconds).orElse(0L),
                    null, services.clock().getAsLong());
            services.cluster().event(gone);
            return;
        }
        p.timeout().cancel(false);
        if (answer.epoch() < epoch) {
            p.conn().sendAndClose(null); // a later connection was accepted while this one learned its receipts
            return;
        }
        accept(p.conn(), p.connect(), p.assignedClientId(), answer.epoch(), answer.sessionPresent());
        for (Runnable deferred : p.deferred()) {
            deferred.run();
        }
    }

    private void onTakenOver(NodeCommand.TakeOver command) {
        if (command.epoch() <= epoch) {
            return; // about a connection older than ours
        }
        if (connection != null) {
            ClientConnection old = connection;
            // [MQTT-3.1.4-3] the existing connection is closed, with 0x8E for MQTT 5; its will is the
            // connect sequence's to publish.
            old.sendAndClose(old.version().isV5()
                    ? Packet.Disconnect.of(ReasonCode.SESSION_TAKEN_OVER, reasonString("another connection took over this client ID"))
                    : null);
            detachConnection();
        }
        cancelTimers();
        will = null;
        // What came from the DEVICE queue stays there for the session's new node.
        long moved = queued.size() + inFlight.values().stream().filter(f -> f.seq() == 0).count();
        for (long i = 0; i < moved; i++) {
            services.drops().count(MessageDrops.Reason.SESSION_MOVED);
        }
        inFlight.clear();
        queued.clear();
        inboundQos2.movedAway();
        subscriptions.clear(); // the session's new node owns them now
        if (pendingConnects.isEmpty()) {
            endHere();
        }
    }

    private void accept(ClientConnection conn, Packet.Connect connect, String assignedClientId, long acceptedEpoch,
            boolean sessionPresent) {
        epoch = acceptedEpoch;
        if (connection != null) {
            // [MQTT-3.1.4-3] the existing connection is closed, with 0x8E for MQTT 5.
            ClientConnection old = connection;
            old.sendAndClose(old.version().isV5()
                    ? Packet.Disconnect.of(ReasonCode.SESSION_TAKEN_OVER, reasonString("another connection took over this client ID"))
                    : null);
            boolean keepWillPending = !connect.cleanStart() && will != null && will.delaySeconds() > 0;
            detachConnection();
            if (!keepWillPending) {
                publishWillNow();
            }
        }
        // A reconnect cancels a will still waiting for its delay, and the session's expiry [MQTT-3.1.3-9].
        cancelTimers();

        if (!sessionPresent) {
            clearSessionState();
        } else if (subscriptions.isEmpty()) {
            adoptSubscriptions();
        }
        clientType = services.clientTypes().of(clientId);
        connection = conn;
        version = connect.version();
        online = true;
        problemInformation = connect.requestProblemInformation();
        clientReceiveMaximum = connect.receiveMaximum() > 0 ? connect.receiveMaximum() : 65_535;
        clientMaximumPacketSize = connect.maximumPacketSize() > 0 ? connect.maximumPacketSize() : 0;
        clientTopicAliasMaximum = Math.min(Math.max(connect.topicAliasMaximum(), 0), services.limits().maxOutboundAliases());
        outboundAliases.clear();
        inboundAliases.clear();
        inboundUnacknowledged = 0;
        will = connect.will();

        MqttLimits limits = services.limits();
        long requestedExpiry = requestedExpiry(connect);
        sessionExpirySeconds = Math.min(requestedExpiry, limits.maxSessionExpirySeconds());

        int keepAlive = connect.keepAliveSeconds();
        int serverKeepAlive = -1;
        if (limits.maxKeepAliveSeconds() > 0 && (keepAlive == 0 || keepAlive > limits.maxKeepAliveSeconds())) {
            keepAlive = limits.maxKeepAliveSeconds();
            serverKeepAlive = keepAlive; // [MQTT-3.2.2-21] the client must use ours
        }

        write(conn, new Packet.ConnAck(sessionPresent, ReasonCode.SUCCESS, assignedClientId,
                sessionExpirySeconds != requestedExpiry ? sessionExpirySeconds : -1,
                limits.receiveMaximum(), -1, true, limits.maximumPacketSize(), limits.topicAliasMaximum(),
                true, true, true, serverKeepAlive,
                version.isV5() && connect.requestResponseInformation() ? responseInformation() : null, null));
        conn.keepAlive(keepAlive);
        deviceQueue = services.deviceQueues() != null && sessionExpirySeconds > 0 && ClientTypes.DEVICE.equals(clientType);
        closeBacklog();
        inFlight.values().removeIf(f -> f.cursor() != null); // the backlog sends them again, with DUP
        if (applicationBacklogs()) {
            AppBacklog[] opened = new AppBacklog[1];
            opened[0] = services.appBacklogs().open(clientId,
                    batch -> mailbox.tell(() -> onAppRecords(opened[0], batch)), !sessionPresent);
            appBacklog = opened[0];
            appBacklog.grant(clientReceiveMaximum);
            for (Map.Entry<String, Subscription> e : subscriptions.entrySet()) {
                if (e.getValue().isShared()) {
                    openShared(e.getKey(), e.getValue());
                }
            }
        }
        queueSeq = 0;
        queueBehind = deviceQueue;
        if (deviceQueue) {
            // Entries of the queue in Redis come from there, with their packet identifiers and DUP.
            inFlight.values().removeIf(f -> f.seq() > 0);
        }
        log.debug("{} connected from {} ({}, session present {})", clientId, conn.remoteAddress(), version, sessionPresent);

        // Resume: unacknowledged messages first, in their original order, with DUP set [MQTT-4.4.0-1].
        for (Map.Entry<Integer, InFlight> e : inFlight.entrySet()) {
            InFlight f = e.getValue();
            write(conn, f.released()
                    ? new Ack(AckType.PUBREL, e.getKey(), ReasonCode.SUCCESS, null)
                    : withAlias(f.publish().withDup(true), false));
        }
        pump();
        readQueue();
    }

    private static long requestedExpiry(Packet.Connect connect) {
        if (connect.version().isV5()) {
            return Math.max(0, connect.sessionExpirySeconds());
        }
        // 3.1.1: a clean session ends with the connection; otherwise it lasts until the client
        // comes back with clean session set (bounded by the broker's maximum).
        return connect.cleanStart() ? 0 : NEVER_EXPIRES;
    }

    /**
     * The session continues here but was held by another node: its subscriptions, which every node
     * knows, move to this node.
     */
    private void adoptSubscriptions() {
        List<Subscription> known = services.subscriptions().subscriptionsOf(clientId);
        if (known.isEmpty()) {
            return;
        }
        for (Subscription s : known) {
            Subscription here = new Subscription(clientId, s.topicFilter(), s.shareGroup(), s.qos(), s.noLocal(),
                    s.retainAsPublished(), s.retainHandling(), s.subscriptionId(), services.nodeId());
            subscriptions.put(s.shareGroup() == null ? s.topicFilter()
                    : "$share/" + s.shareGroup() + "/" + s.topicFilter(), here);
            services.subscriptions().add(here);
        }
        subscriptionsChanged();
    }

    private void subscriptionsChanged() {
        services.cluster().subscriptionsChanged(clientId, epoch, List.copyOf(subscriptions.values()));
    }

    // ======================================================================== packets from the client

    private void onPacket(Packet packet) {
        // Java 17: no pattern matching in switch yet.
        if (packet instanceof Packet.Publish p) {
            onPublish(p);
        } else if (packet instanceof Ack a) {
            onAck(a);
        } else if (packet instanceof Packet.Subscribe s) {
            onSubscribe(s);
        } else if (packet instanceof Packet.Unsubscribe u) {
            onUnsubscribe(u);
        } else if (packet instanceof Packet.PingReq) {
            write(connection, new Packet.PingResp());
        } else if (packet instanceof Packet.Disconnect d) {
            onDisconnect(d);
        } else if (packet instanceof Packet.Connect) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "second CONNECT"); // [MQTT-3.1.0-2]
        } else if (packet instanceof Packet.Auth) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "AUTH without an authentication method");
        } else {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR,
                    packet.getClass().getSimpleName() + " is not sent by clients");
        }
    }

    private void onPublish(Packet.Publish p) {
        ClientConnection from = connection;
        boolean handedToKafka = false;
        try {
            handedToKafka = publish(p);
        } finally {
            if (!handedToKafka) {
                from.publishSettled();
            }
        }
    }

    /** Returns whether the message went to Kafka (and will be settled by {@link #onStored}). */
    private boolean publish(Packet.Publish p) {
        String topic = resolveInboundTopic(p);
        try {
            TopicNames.validateTopicName(topic);
        } catch (InvalidTopicException e) {
            throw new ProtocolViolation(ReasonCode.TOPIC_NAME_INVALID, e.getMessage());
        }
        if (p.responseTopic() != null) {
            try {
                TopicNames.validateTopicName(p.responseTopic()); // [MQTT-3.3.2-14] no wildcards
            } catch (InvalidTopicException e) {
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "Response Topic: " + e.getMessage());
            }
        }
        if (p.qos() > 0) {
            if (p.qos() == 2 && inboundQos2.isResend(p.packetId(), p.dup())) {
                // A resend of a QoS 2 message we already have: acknowledge again, never store twice [MQTT-4.3.3-10].
                if (inboundQos2.isStored(p.packetId())) {
                    write(connection, new Ack(AckType.PUBREC, p.packetId(), ReasonCode.SUCCESS, null));
                }
                return false;
            }
            if (inboundUnacknowledged >= services.limits().receiveMaximum()) {
                throw new ProtocolViolation(ReasonCode.RECEIVE_MAXIMUM_EXCEEDED,
                        "more than " + services.limits().receiveMaximum() + " unacknowledged QoS 1/2 messages");
            }
        }
        if (p.payloadFormat() == 1 && !isUtf8(p.payload())) {
            if (p.qos() == 0) {
                throw new ProtocolViolation(ReasonCode.PAYLOAD_FORMAT_INVALID, "payload is not valid UTF-8");
            }
            write(connection, new Ack(p.qos() == 1 ? AckType.PUBACK : AckType.PUBREC, p.packetId(),
                    ReasonCode.PAYLOAD_FORMAT_INVALID, reasonString("payload is not valid UTF-8")));
            return false;
        }
        BrokerMessage message = new BrokerMessage(topic, p.payload(), p.qos(), p.retain(), clientId,
                services.clock().getAsLong(), p.messageExpirySeconds(), p.payloadFormat(), p.contentType(),
                p.responseTopic(), p.correlationData(), p.userProperties());
        // -- retained limits (RetainedAdmission): 0x97 where the publisher can be told, else not retained
        RetainedAdmission.Decision admitted = RetainedAdmission.admit(services, message,
                connection.version().isV5() && p.qos() > 0);
        if (admitted.refused()) {
            write(connection, new Ack(p.qos() == 1 ? AckType.PUBACK : AckType.PUBREC, p.packetId(),
                    ReasonCode.QUOTA_EXCEEDED, reasonString(admitted.refusal())));
            return false;
        }
        message = admitted.message();
        // -- end retained limits
        if (p.qos() == 2) {
            inboundQos2.storing(p.packetId());
        }
        if (p.qos() > 0) {
            inboundUnacknowledged++;
        }
        ClientConnection from = connection;
        services.publishLog().append(message).whenComplete((ok, error) ->
                mailbox.tell(() -> onStored(from, p, error)));
        return true;
    }

    /** Kafka answered for an incoming PUBLISH: only now is it acknowledged (promise 1). */
    private void onStored(ClientConnection from, Packet.Publish p, Throwable error) {
        if (error != null) {
            services.drops().count(MessageDrops.Reason.PUBLISH_NOT_STORED);
            log.warn("{}: PUBLISH to {} not stored in Kafka: {}", clientId, p.topic(), error.toString());
        }
        java.util.concurrent.CompletableFuture<Void> recorded = p.qos() < 2 ? InboundQos2.DONE
                : inboundQos2.settled(p.packetId(), error == null, sessionExpirySeconds);
        from.publishSettled();
        if (from != connection) {
            return; // the client left; a QoS 1/2 publisher resends on reconnect
        }
        // The receive window frees a QoS 1 slot with PUBACK, a QoS 2 slot with PUBCOMP, or when the
        // flow ends on an error PUBREC (section 4.9, Flow Control).
        if (p.qos() == 1 || p.qos() == 2 && error != null) {
            inboundUnacknowledged--;
        }
        if (error != null && !from.version().isV5()) {
            // 3.1.1 has no way to say "not stored" in an acknowledgement: end the connection so
            // the client resends, rather than acknowledging what was not stored.
            disconnect(ReasonCode.UNSPECIFIED_ERROR, null, true);
            return;
        }
        if (p.qos() == 0) {
            return;
        }
        ReasonCode code = error == null ? ReasonCode.SUCCESS : ReasonCode.UNSPECIFIED_ERROR;
        String reason = error == null ? null : reasonString("message not stored: " + error.getMessage());
        Ack ack = new Ack(p.qos() == 1 ? AckType.PUBACK : AckType.PUBREC, p.packetId(), code, reason);
        if (recorded.isDone()) {
            write(from, ack);
        } else { // PUBREC waits until the receipt is in Redis (see InboundQos2#settled)
            recorded.thenRun(() -> mailbox.tell(() -> {
                if (from == connection) {
                    write(from, ack);
                }
            }));
        }
    }

    private String resolveInboundTopic(Packet.Publish p) {
        int alias = p.topicAlias();
        if (alias <= 0) {
            if (p.topic().isEmpty()) {
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "empty topic without a topic alias");
            }
            return p.topic();
        }
        if (alias > services.limits().topicAliasMaximum()) {
            throw new ProtocolViolation(ReasonCode.TOPIC_ALIAS_INVALID,
                    "topic alias " + alias + " above the maximum " + services.limits().topicAliasMaximum()); // [MQTT-3.3.2-9]
        }
        if (!p.topic().isEmpty()) {
            inboundAliases.put(alias, p.topic());
            return p.topic();
        }
        String known = inboundAliases.get(alias);
        if (known == null) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "unknown topic alias " + alias);
        }
        return known;
    }

    private void onAck(Ack a) {
        int id = a.packetId();
        switch (a.type()) {
            case PUBACK -> {
                InFlight f = inFlight.get(id);
                if (f != null && f.publish().qos() == 1) {
                    inFlight.remove(id);
                    delivered(f);
                    pump();
                }
            }
            case PUBREC -> {
                InFlight f = inFlight.get(id);
                if (f == null || f.publish().qos() != 2) {
                    write(connection, new Ack(AckType.PUBREL, id, ReasonCode.PACKET_IDENTIFIER_NOT_FOUND, null));
                } else if (a.reasonCode().isError()) {
                    inFlight.remove(id); // the client refused it; with an error PUBREC the QoS 2 flow ends
                    delivered(f);
                    pump();
                } else {
                    inFlight.put(id, new InFlight(f.publish(), true, f.seq(), f.cursor(), f.appOffset()));
                    if (f.seq() > 0) {
                        services.deviceQueues().sentWith(clientId, f.seq(), -id); // resume with PUBREL
                    }
                    write(connection, new Ack(AckType.PUBREL, id, ReasonCode.SUCCESS, null));
                }
            }
            case PUBCOMP -> {
                InFlight f = inFlight.get(id);
                if (f != null && f.released()) {
                    inFlight.remove(id);
                    delivered(f);
                    pump();
                }
            }
            case PUBREL -> {
                if (inboundQos2.heldWindow(id)) {
                    inboundUnacknowledged = Math.max(0, inboundUnacknowledged - 1);
                }
                boolean known = inboundQos2.released(id, sessionExpirySeconds);
                // [MQTT-4.3.3-11] after PUBREL the ID may be reused; PUBCOMP either way.
                write(connection, new Ack(AckType.PUBCOMP, id,
                        known ? ReasonCode.SUCCESS : ReasonCode.PACKET_IDENTIFIER_NOT_FOUND, null));
            }
        }
    }

    private void onSubscribe(Packet.Subscribe s) {
        List<ReasonCode> codes = new ArrayList<>(s.subscriptions().size());
        List<Subscription> added = new ArrayList<>();
        for (Packet.TopicSubscription t : s.subscriptions()) {
            SharedSubscription shared;
            try {
                shared = SharedSubscription.parse(t.filter());
                TopicNames.validateTopicFilter(shared != null ? shared.filter() : t.filter());
            } catch (InvalidTopicException e) {
                codes.add(ReasonCode.TOPIC_FILTER_INVALID);
                continue;
            }
            if (shared != null && t.noLocal()) {
                // [MQTT-3.8.3-4] No Local on a shared subscription is a protocol error.
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "No Local set on shared subscription " + t.filter());
            }
            String filter = shared != null ? shared.filter() : t.filter();
            String group = shared != null ? shared.group() : null;
            if (shared != null && applicationBacklogs() && !services.appBacklogs().sharedKnown(group, filter)) {
                // The group's backlog topic is where its messages wait; without it the subscription cannot work.
                codes.add(ReasonCode.UNSPECIFIED_ERROR);
                continue;
            }
            Subscription sub = new Subscription(clientId, filter, group, t.qos(), t.noLocal(), t.retainAsPublished(),
                    t.retainHandling(), s.subscriptionId(), services.nodeId());
            Subscription previous = subscriptions.put(t.filter(), sub);
            services.subscriptions().add(sub);
            codes.add(grantedQos(t.qos()));
            if (shared != null && applicationBacklogs()) {
                AppBacklog reading = sharedBacklogs.get(t.filter());
                if (reading != null) {
                    sharedSubscriptions.put(reading, sub); // the same subscription with new options
                } else {
                    openShared(t.filter(), sub);
                }
            }
            // Retained messages on subscribe, per Retain Handling [MQTT-3.3.1-9, -10, -11]; never for shared.
            if (group == null && (t.retainHandling() == 0 || t.retainHandling() == 1 && previous == null)) {
                added.add(sub);
            }
        }
        subscriptionsChanged();
        write(connection, new Packet.SubAck(s.packetId(), codes, null));
        for (Subscription sub : added) {
            for (BrokerMessage retained : services.retained().match(sub.topicFilter())) {
                if (retained.isExpired(services.clock().getAsLong())) {
                    continue; // expired retained messages are no longer retained [MQTT-3.3.2-5]
                }
                List<Integer> ids = sub.subscriptionId() > 0 ? List.of(sub.subscriptionId()) : List.of();
                enqueue(new Delivery(retained, Math.min(retained.qos(), sub.qos()), true, ids));
            }
        }
    }

    private void onUnsubscribe(Packet.Unsubscribe u) {
        List<ReasonCode> codes = new ArrayList<>(u.filters().size());
        for (String raw : u.filters()) {
            Subscription removed = subscriptions.remove(raw);
            if (removed != null) {
                services.subscriptions().remove(clientId, removed.topicFilter(), removed.shareGroup());
                closeShared(raw);
            }
            codes.add(removed != null ? ReasonCode.SUCCESS : ReasonCode.NO_SUBSCRIPTION_EXISTED);
        }
        if (codes.contains(ReasonCode.SUCCESS)) {
            subscriptionsChanged();
        }
        write(connection, new Packet.UnsubAck(u.packetId(), codes, null));
    }

    private void onDisconnect(Packet.Disconnect d) {
        if (d.sessionExpirySeconds() >= 0) {
            if (sessionExpirySeconds == 0 && d.sessionExpirySeconds() > 0) {
                // [MQTT-3.14.2-2] a session that was to end with the connection cannot be extended now.
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "session expiry set on DISCONNECT after 0 on CONNECT");
            }
            sessionExpirySeconds = Math.min(d.sessionExpirySeconds(), services.limits().maxSessionExpirySeconds());
        }
        // 0x04 asks for the will; any other DISCONNECT from the client discards it [MQTT-3.1.2-10].
        boolean publishWill = d.reasonCode() == ReasonCode.DISCONNECT_WITH_WILL;
        ClientConnection conn = connection;
        detach(publishWill);
        conn.sendAndClose(null);
    }

    // ======================================================================== delivery to the client

    private void onDeliver(BrokerMessage message, List<Subscription> matched) {
        if (ended) {
            services.drops().count(MessageDrops.Reason.NO_SESSION);
            return;
        }
        Delivery d = toDelivery(message, matched);
        if (d != null) {
            enqueue(d);
        }
    }

    /** The one copy this session gets of a message its subscriptions {@code matched}; null if none. */
    private Delivery toDelivery(BrokerMessage message, List<Subscription> matched) {
        int qos = -1;
        boolean retain = false;
        List<Integer> ids = List.of();
        for (Subscription sub : matched) {
            if (sub.noLocal() && sub.shareGroup() == null && clientId.equals(message.publisherId())) {
                continue; // [MQTT-3.8.3-3]
            }
            // One copy at the highest QoS of the overlapping subscriptions, with all their identifiers [MQTT-3.3.4-2/3].
            qos = Math.max(qos, Math.min(message.qos(), sub.qos()));
            retain |= sub.retainAsPublished() && message.retain(); // [MQTT-3.3.1-12/13]
            if (sub.subscriptionId() > 0) {
                if (ids.isEmpty()) {
                    ids = new ArrayList<>(matched.size());
                }
                ids.add(sub.subscriptionId());
            }
        }
        if (qos < 0) {
            return null;
        }
        return new Delivery(message, qos, retain, ids);
    }

    // ------------------------------------------------------------------ the DEVICE queue in Redis

    /** Reads what waits in the queue beyond {@link #queueSeq}, as far as the receive window allows. */
    private void readQueue() {
        if (!deviceQueue || connection == null || queueReading || !queueBehind) {
            return;
        }
        int room = clientReceiveMaximum - inFlight.size();
        if (room <= 0) {
            return; // an acknowledgement calls again
        }
        queueReading = true;
        queueBehind = false;
        int max = Math.min(room, 256);
        ClientConnection conn = connection;
        services.deviceQueues().read(clientId, queueSeq, max).whenComplete((entries, error) ->
                mailbox.tell(() -> onQueueRead(conn, max, entries, error)));
    }

    private void onQueueRead(ClientConnection conn, int max, List<DeviceQueues.Entry> entries, Throwable error) {
        queueReading = false;
        queueBehind = true;
        if (conn != connection) {
            return; // a new connection reads for itself
        }
        if (error != null) {
            // Redis is away: delivery from the queue pauses and resumes when it is back.
            log.warn("{}: reading the DEVICE queue failed, trying again: {}", clientId, error.toString());
            services.timers().schedule(() -> mailbox.tell(this::readQueue), 1, TimeUnit.SECONDS);
            return;
        }
        for (DeviceQueues.Entry e : entries) {
            if (e.seq() > queueSeq) {
                queueSeq = e.seq();
                deliverQueued(e.seq(), e.value(), e.packetId());
            }
        }
        queueBehind = entries.size() >= max;
        readQueue();
    }

    private void onQueued(NodeCommand.Queued q) {
        if (!deviceQueue || connection == null || q.seq() <= queueSeq) {
            return; // offline: it waits in Redis; or delivered already
        }
        if (!queueReading && !queueBehind && q.seq() == queueSeq + 1 && inFlight.size() < clientReceiveMaximum) {
            queueSeq = q.seq();
            Delivery d = toDelivery(q.message().message(), q.message().matched());
            sendQueued(q.seq(), d, 0);
        } else {
            queueBehind = true;
            readQueue();
        }
    }

    private void deliverQueued(long seq, byte[] value, int packetId) {
        if (packetId < 0 && !inFlight.containsKey(-packetId)) {
            // PUBREC came before the client left: the QoS 2 flow continues with PUBREL [MQTT-4.4.0-1].
            Packet.Publish placeholder = new Packet.Publish("-", 0, new byte[0], 2, false, true, -packetId, -1, -1,
                    null, null, null, List.of(), List.of());
            inFlight.put(-packetId, new InFlight(placeholder, true, seq, null, -1));
            write(connection, new Ack(AckType.PUBREL, -packetId, ReasonCode.SUCCESS, null));
            return;
        }
        if (packetId < 0) {
            return; // its identifier is taken by another flow: it waits for the next reconnect
        }
        Downlink d;
        try {
            d = ClusterCodec.decodeDownlink(value);
        } catch (MessageFormatException e) {
            log.warn("{}: skipping a malformed DEVICE queue entry: {}", clientId, e.getMessage());
            services.drops().count(MessageDrops.Reason.MALFORMED_RECORD);
            services.deviceQueues().remove(clientId, seq);
            return;
        }
        if (d.message().createdAtMillis() + services.deviceQueues().ttl().toMillis() < services.clock().getAsLong()) {
            services.drops().count(MessageDrops.Reason.EXPIRED); // older than the queue keeps anything
            services.deviceQueues().remove(clientId, seq);
            return;
        }
        sendQueued(seq, toDelivery(d.message(), d.matched()), packetId);
    }

    private void sendQueued(long seq, Delivery d, int packetId) {
        if (d == null || !send(d, seq, packetId)) {
            services.deviceQueues().remove(clientId, seq); // not for this client after all, or dropped and counted
        }
    }

    // ------------------------------------------------------------------ the APPLICATION backlog in Kafka

    /** Whether this session's messages wait in Kafka backlogs: it is a persistent APPLICATION session. */
    private boolean applicationBacklogs() {
        return services.appBacklogs() != null && sessionExpirySeconds > 0 && ClientTypes.APPLICATION.equals(clientType);
    }

    /** Joins the readers of a shared subscription's backlog (the session is connected). */
    private void openShared(String rawFilter, Subscription sub) {
        AppBacklog[] opened = new AppBacklog[1];
        opened[0] = services.appBacklogs().openShared(sub.shareGroup(), sub.topicFilter(),
                batch -> mailbox.tell(() -> onAppRecords(opened[0], batch)),
                partitions -> mailbox.tell(() -> onRevoked(opened[0], partitions)));
        sharedBacklogs.put(rawFilter, opened[0]);
        sharedSubscriptions.put(opened[0], sub);
        opened[0].grant(clientReceiveMaximum);
    }

    private void closeShared(String rawFilter) {
        AppBacklog b = sharedBacklogs.remove(rawFilter);
        if (b != null) {
            forget(b);
            b.close();
        }
    }

    private void forget(AppBacklog b) {
        sharedSubscriptions.remove(b);
        cursors.remove(b);
        appWaiting.removeIf(w -> w.from() == b);
    }

    private void onAppRecords(AppBacklog from, List<AppBacklog.Record> batch) {
        if (from != appBacklog && !sharedSubscriptions.containsKey(from) || connection == null) {
            return; // an earlier connection's or subscription's; what it read is read again from the committed offset
        }
        for (AppBacklog.Record r : batch) {
            appWaiting.add(new Waiting(from, r));
        }
        pump();
    }

    /** Sends backlog records while the receive window has room; QoS 0 records need none. */
    private void drainAppWaiting() {
        while (connection != null && !appWaiting.isEmpty() && inFlight.size() < clientReceiveMaximum) {
            Waiting w = appWaiting.poll();
            deliverRecord(w.from(), w.record());
        }
    }

    private void deliverRecord(AppBacklog from, AppBacklog.Record r) {
        Cursor cursor = cursors.computeIfAbsent(from, b -> new HashMap<>())
                .computeIfAbsent(r.partition(), p -> new Cursor(from, p));
        cursor.next = Math.max(cursor.next, r.offset() + 1);
        cursor.open.add(r.offset());
        Delivery d;
        try {
            Downlink downlink = ClusterCodec.decodeDownlink(r.value());
            Subscription shared = sharedSubscriptions.get(from);
            // A shared backlog holds the group's messages; this member gets them with its own options.
            d = toDelivery(downlink.message(), shared != null ? List.of(shared) : downlink.matched());
        } catch (MessageFormatException e) {
            log.warn("{}: skipping a malformed backlog record at {}/{}: {}", clientId, r.partition(), r.offset(),
                    e.getMessage());
            services.drops().count(MessageDrops.Reason.MALFORMED_RECORD);
            d = null;
        }
        boolean sent = d != null && send(d, 0, 0, cursor, d.qos() > 0 ? r.offset() : -1, r.redelivery());
        if (sent) {
            cursor.lastSent = Math.max(cursor.lastSent, r.offset());
        }
        if (!sent || d.qos() == 0) {
            appDone(cursor, r.offset()); // delivered (QoS 0 is once sent), or dropped and counted
        }
    }

    /** A backlog record is delivered: commit up to the first one that is not, and ask for one more. */
    private void appDone(Cursor cursor, long offset) {
        if (cursors.getOrDefault(cursor.backlog, Map.of()).get(cursor.partition) != cursor
                || !cursor.open.remove(offset)) {
            return; // its partition went to another member, or its backlog was closed
        }
        long commit = cursor.open.isEmpty() ? cursor.next : cursor.open.first();
        if (commit > cursor.committed) {
            cursor.committed = commit;
            cursor.backlog.commit(cursor.partition, commit, cursor.lastSent);
        }
        cursor.backlog.grant(1);
    }

    /**
     * A shared backlog's partitions went to another member. Records of them not yet acknowledged
     * are that member's to deliver; credit they held comes back to this reader.
     */
    private void onRevoked(AppBacklog from, java.util.Set<Integer> partitions) {
        Map<Integer, Cursor> mine = cursors.get(from);
        int freed = 0;
        if (mine != null) {
            for (Integer p : partitions) {
                Cursor c = mine.remove(p);
                if (c != null) {
                    freed += c.open.size();
                }
            }
        }
        int before = appWaiting.size();
        appWaiting.removeIf(w -> w.from() == from && partitions.contains(w.record().partition()));
        freed += before - appWaiting.size();
        if (freed > 0) {
            from.grant(freed);
        }
    }

    /** Stops reading every backlog; what they handed over and was not delivered is read again from Kafka. */
    private void closeBacklog() {
        if (appBacklog != null) {
            appBacklog.close();
            appBacklog = null;
        }
        sharedBacklogs.values().forEach(AppBacklog::close);
        sharedBacklogs.clear();
        sharedSubscriptions.clear();
        cursors.clear();
        appWaiting.clear();
    }

    /** A QoS 1/2 flow completed: its queue entry, if any, is done with. */
    private void delivered(InFlight f) {
        if (f.seq() > 0) {
            services.deviceQueues().remove(clientId, f.seq());
        }
        if (f.cursor() != null) {
            appDone(f.cursor(), f.appOffset());
        }
        readQueue();
    }

    private void enqueue(Delivery d) {
        if (d.qos() == 0) {
            if (connection == null) {
                services.drops().count(MessageDrops.Reason.CLIENT_OFFLINE_QOS0);
                return;
            }
            // The socket may have drained while its writable signal is still on its way through
            // the mailbox: what waits goes first, in order, without waiting for that signal.
            drainQos0();
            if (qos0Queued.isEmpty() && connection.isWritable()) {
                send(d);
            } else {
                flush(); // the socket is full: let it start on what this turn wrote
                if (qos0Queued.size() >= services.limits().maxQueuedQos0()) {
                    services.drops().count(MessageDrops.Reason.QOS0_QUEUE_FULL);
                } else {
                    qos0Queued.add(d);
                }
            }
            return;
        }
        if (queued.size() >= services.limits().maxQueuedMessages()) {
            queued.poll(); // the oldest goes, so a returning client gets the newest
            services.drops().count(MessageDrops.Reason.SESSION_QUEUE_FULL);
        }
        queued.add(d);
        pump();
    }

    /** Sends queued QoS 1/2 messages while the client's receive window has room [MQTT-3.3.4-7]. */
    private void pump() {
        while (connection != null && inFlight.size() < clientReceiveMaximum && !queued.isEmpty()) {
            send(queued.poll());
        }
        drainAppWaiting();
    }

    private void drainQos0() {
        while (connection != null && connection.isWritable() && !qos0Queued.isEmpty()) {
            send(qos0Queued.poll());
        }
    }

    private void send(Delivery d) {
        send(d, 0, 0);
    }

    private boolean send(Delivery d, long seq, int previousPacketId) {
        return send(d, seq, previousPacketId, null, -1, false);
    }

    /**
     * Sends a delivery; {@code seq} is its DEVICE queue entry (0 if none) and {@code previousPacketId}
     * the packet identifier it was sent with before (0 if never), which it keeps, with DUP set.
     *
     * @return false if it was dropped (expired, too large) instead
     */
    private boolean send(Delivery d, long seq, int previousPacketId, Cursor cursor, long appOffset, boolean redelivery) {
        BrokerMessage m = d.message();
        long remaining = m.remainingExpirySeconds(services.clock().getAsLong());
        if (m.expiryIntervalSeconds() >= 0 && remaining <= 0) {
            services.drops().count(MessageDrops.Reason.EXPIRED); // [MQTT-3.3.2-5]
            return false;
        }
        boolean v5 = version.isV5();
        boolean resend = previousPacketId > 0 && !inFlight.containsKey(previousPacketId) && d.qos() > 0;
        int packetId = d.qos() == 0 ? 0 : resend ? previousPacketId : nextPacketId();
        Packet.Publish publish = new Packet.Publish(m.topic(), 0, m.payload(), d.qos(), d.retain(), false, packetId,
                v5 ? remaining : -1, v5 ? m.payloadFormat() : -1, v5 ? m.contentType() : null,
                v5 ? m.responseTopic() : null, v5 ? m.correlationData() : null,
                v5 ? m.userProperties() : List.of(), v5 ? d.subscriptionIds() : List.of());
        if (clientMaximumPacketSize > 0 && PacketSizes.publish(publish, v5) > clientMaximumPacketSize) {
            services.drops().count(MessageDrops.Reason.PACKET_TOO_LARGE); // [MQTT-3.1.2-25]
            return false;
        }
        if (d.qos() > 0) {
            inFlight.put(packetId, new InFlight(publish, false, seq, cursor, appOffset));
            if (seq > 0 && !resend) {
                services.deviceQueues().sentWith(clientId, seq, packetId); // survives a reconnect
            }
        }
        write(connection, withAlias(resend || redelivery && d.qos() > 0 ? publish.withDup(true) : publish, true));
        return true;
    }

    /** Writes {@code packet} to {@code conn}; it goes out with the next {@link #flush()}, at the latest at the end of the turn. */
    private void write(ClientConnection conn, Packet packet) {
        if (unflushed != conn) {
            flush(); // a connection replaced within this turn still gets what was written to it
            unflushed = conn;
        }
        conn.write(packet);
    }

    private void flush() {
        if (unflushed != null) {
            unflushed.flush();
            unflushed = null;
        }
    }

    /**
     * Replaces the topic by an alias where the client allows aliases: a new topic gets the next
     * free alias (sent with the topic once), a known one is sent as alias only.
     */
    private Packet.Publish withAlias(Packet.Publish p, boolean mayAssign) {
        if (clientTopicAliasMaximum == 0) {
            return p;
        }
        Integer alias = outboundAliases.get(p.topic());
        String topic = p.topic();
        if (alias != null) {
            topic = "";
        } else if (mayAssign && outboundAliases.size() < clientTopicAliasMaximum) {
            alias = outboundAliases.size() + 1;
            outboundAliases.put(p.topic(), alias);
        } else {
            return p;
        }
        return new Packet.Publish(topic, alias, p.payload(), p.qos(), p.retain(), p.dup(), p.packetId(),
                p.messageExpirySeconds(), p.payloadFormat(), p.contentType(), p.responseTopic(), p.correlationData(),
                p.userProperties(), p.subscriptionIds());
    }

    private int nextPacketId() {
        // [MQTT-2.2.1-3] a new ID for each new QoS 1/2 PUBLISH, not one in use.
        do {
            lastPacketId = lastPacketId == 65_535 ? 1 : lastPacketId + 1;
        } while (inFlight.containsKey(lastPacketId));
        return lastPacketId;
    }

    // ======================================================================== leaving

    /** Server-side DISCONNECT (MQTT 5 only: 3.1.1 has none, the connection just closes) [MQTT-4.13.1-1]. */
    private void disconnect(ReasonCode code, String reason, boolean publishWill) {
        ClientConnection conn = connection;
        if (conn == null) {
            return;
        }
        detach(publishWill);
        conn.sendAndClose(conn.version().isV5() ? Packet.Disconnect.of(code, reasonString(reason)) : null);
    }

    private void detach(boolean publishWill) {
        detachConnection();
        if (publishWill && will != null) {
            long delay = will.delaySeconds();
            if (delay > 0 && sessionExpirySeconds > 0) {
                // The will waits for its delay, or for the end of the session if that comes first [MQTT-3.1.3-9].
                long wait = Math.min(delay, sessionExpirySeconds);
                willTimer = services.timers().schedule(() -> mailbox.tell(this::onWillTimer), wait, TimeUnit.SECONDS);
            } else {
                publishWillNow();
            }
        } else {
            will = null;
        }
        SessionState.PendingWill waiting = willTimer != null && will != null
                ? new SessionState.PendingWill(willMessage(will), will.delaySeconds()) : null;
        services.cluster().event(new SessionEvent.Disconnected(clientId, epoch, sessionExpirySeconds, waiting,
                services.clock().getAsLong()));
        inboundQos2.disconnected(sessionExpirySeconds);
        if (sessionExpirySeconds == 0) {
            endSession();
        } else if (sessionExpirySeconds != NEVER_EXPIRES) {
            expiryTimer = services.timers().schedule(() -> mailbox.tell(this::onExpiryTimer),
                    sessionExpirySeconds, TimeUnit.SECONDS);
        }
    }

    private void detachConnection() {
        closeBacklog();
        connection = null;
        online = false;
        qos0Queued.forEach(d -> services.drops().count(MessageDrops.Reason.CLIENT_OFFLINE_QOS0));
        qos0Queued.clear();
    }

    private void onWillTimer() {
        willTimer = null;
        if (connection == null) {
            publishWillNow();
            services.cluster().event(new SessionEvent.WillPublished(clientId, epoch));
        }
    }

    private void onExpiryTimer() {
        expiryTimer = null;
        if (connection == null) {
            publishWillNow(); // a delayed will is due when the session ends [MQTT-3.1.3-9]
            services.cluster().event(new SessionEvent.Expired(clientId, epoch));
            endSession();
        }
    }

    private BrokerMessage willMessage(Packet.Will w) {
        return new BrokerMessage(w.topic(), w.payload(), w.qos(), w.retain(), clientId,
                services.clock().getAsLong(), w.messageExpirySeconds(), w.payloadFormat(), w.contentType(),
                w.responseTopic(), w.correlationData(), w.userProperties());
    }

    private void publishWillNow() {
        Packet.Will w = will;
        will = null;
        if (willTimer != null) {
            willTimer.cancel(false);
            willTimer = null;
        }
        if (w == null) {
            return;
        }
        BrokerMessage message = willMessage(w);
        services.publishLog().append(message).whenComplete((ok, error) -> {
            if (error != null) {
                services.drops().count(MessageDrops.Reason.PUBLISH_NOT_STORED);
                log.warn("Will of {} to {} not stored in Kafka: {}", clientId, w.topic(), error.toString());
            }
        });
    }

    private void endSession() {
        clearSessionState();
        will = null;
        sessionExpirySeconds = 0;
        endHere();
    }

    /**
     * This node lets go of the actor; the cluster's state of the session is not touched. Unless a
     * CONNECT for the client ID is queued here or waits for the connect sequence: that connection
     * then starts the next session with this actor, with nothing of the old one.
     */
    private void endHere() {
        if (registry.tryEnd(this)) {
            online = false;
        } else {
            log.debug("{}: session ended here, a new connection starts the next one", clientId);
        }
    }

    private void clearSessionState() {
        if (services.deviceQueues() != null) {
            // Retried until Redis takes it; this client's next read of its queue waits for it.
            services.deviceQueues().delete(clientId).thenAccept(held -> {
                for (long i = 0; i < held; i++) {
                    services.drops().count(MessageDrops.Reason.SESSION_ENDED);
                }
            });
        }
        if (!services.subscriptions().removeClient(clientId).isEmpty() || !subscriptions.isEmpty()) {
            subscriptions.clear();
            subscriptionsChanged();
        }
        subscriptions.clear();
        inboundQos2.ended();
        int discarded = inFlight.size() + queued.size();
        for (int i = 0; i < discarded; i++) {
            services.drops().count(MessageDrops.Reason.SESSION_ENDED);
        }
        inFlight.clear();
        queued.clear();
    }

    private void cancelTimers() {
        if (expiryTimer != null) {
            expiryTimer.cancel(false);
            expiryTimer = null;
        }
        if (willTimer != null) {
            willTimer.cancel(false);
            willTimer = null;
        }
    }

    // ======================================================================== helpers

    /**
     * Response Information for a client that asked for it (never otherwise [MQTT-3.1.2-28]): the
     * topic prefix {@code response/<client ID>}, under which the client can build the Response
     * Topics of its requests. None when the client ID would not make a valid topic name (it holds
     * a wildcard character or U+0000).
     */
    private String responseInformation() {
        String prefix = "response/" + clientId;
        try {
            TopicNames.validateTopicName(prefix);
            return prefix;
        } catch (InvalidTopicException e) {
            return null;
        }
    }

    /** [MQTT-3.1.2-29] no reason strings for a client that asked for no problem information. */
    private String reasonString(String reason) {
        return problemInformation ? reason : null;
    }

    private static ReasonCode grantedQos(int qos) {
        return switch (qos) {
            case 0 -> ReasonCode.SUCCESS;
            case 1 -> ReasonCode.GRANTED_QOS_1;
            default -> ReasonCode.GRANTED_QOS_2;
        };
    }

    private static boolean isUtf8(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
