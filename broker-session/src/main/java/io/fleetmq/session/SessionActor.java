package io.fleetmq.session;

import io.fleetmq.core.actor.Mailbox;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.session.cluster.ClientTypes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client session and, while the client is connected, its connection: the MQTT state machine
 * of DESIGN.md "The client actor". Every input (packets, deliveries, Kafka callbacks, timers)
 * arrives through the mailbox, so the session's state is touched by one thread at a time and needs
 * no locks.
 *
 * <p>The actor dispatches between the concerns that own that state: {@link ConnectWaits} (CONNECTs
 * waiting for the connect sequence), {@link Connection}, {@link InboundFlow} (what the client
 * publishes), {@link OutboundFlow} (what it is sent), {@link Subscriptions}, {@link SessionLifetime}
 * (will and expiry), {@link DeviceQueueReader} and {@link AppBacklogReader} (the stores of
 * persistent sessions), and {@link DeliveryInbox} (deliveries from the router). The order of the
 * session's steps (accept, detach, take-over, end) is kept here.
 */
public final class SessionActor {

    private static final Logger log = LoggerFactory.getLogger(SessionActor.class);

    private final String clientId;
    private final SessionServices services;
    private final SessionRegistry registry;
    private final Mailbox mailbox;
    /** What the client may do, as its authentication (or a later review) decided. */
    private ClientAccess access = ClientAccess.ALLOW_ALL;
    /** Read by other threads (routing shared subscriptions); written only by the actor. */
    private volatile boolean online;
    private volatile boolean ended;
    /** CONNECTs told to the mailbox and not yet processed; while any is, the session does not end. */
    private final AtomicInteger connectsPending = new AtomicInteger();
    /** The connect sequence's number of the current (or last) connection; 0 before the first. */
    private long epoch;
    private volatile String clientType = ClientTypes.DEVICE;
    /**
     * Messages for this session go through its store (DEVICE queue, APPLICATION backlog): its expiry
     * is above 0, or it was resumed with expiry 0 and keeps its store until it ends.
     */
    private volatile boolean queuing;
    /** The session's expiry passed while a CONNECT of its client waited: it ends if that is refused. */
    private boolean expiryDue;

    private final Connection connection = new Connection();
    private final ConnectWaits connects;
    private final InboundQos2 inboundQos2;
    private final InboundFlow inbound;
    private final OutboundFlow outbound;
    private final Subscriptions subscriptions;
    private final SessionLifetime lifetime;
    private final DeviceQueueReader deviceQueue;
    private final AppBacklogReader appBacklogs;
    private final DeliveryInbox inbox;
    private final PacketGate gate;
    private final AuthExpiry authExpiry;
    private final Reauthentication reauthentication;

    SessionActor(String clientId, SessionServices services, SessionRegistry registry) {
        this.clientId = clientId;
        this.services = services;
        this.registry = registry;
        this.mailbox = new Mailbox(services.actorPool(), clientId, this::endOfTurn); // the ID itself: no string per session
        this.inboundQos2 = new InboundQos2(clientId, services.qos2Receipts(), services.meters());
        this.lifetime = new SessionLifetime(clientId, services, mailbox, this::onWillDue, this::onExpired,
                will -> ConnectWaits.willAllowed(access, will));
        this.connects = new ConnectWaits(clientId, services, services.guard(), mailbox::tell, () -> epoch, this::accept,
                this::connectRefused, next -> inboundQos2.resume(mailbox::tell, next), registry::draining);
        this.inbound = new InboundFlow(clientId, services, connection, inboundQos2, () -> access, mailbox::tell,
                lifetime::expirySeconds, (code, reason) -> disconnect(code, reason, true));
        this.outbound = new OutboundFlow(clientId, services, connection);
        this.subscriptions = new Subscriptions(clientId, services, () -> access, () -> epoch);
        this.deviceQueue = new DeviceQueueReader(clientId, services, connection, outbound, mailbox::tell, this::pump);
        this.appBacklogs = new AppBacklogReader(clientId, services, connection, outbound, mailbox::tell);
        this.inbox = new DeliveryInbox(clientId, services, mailbox, this::onDeliver);
        this.gate = new PacketGate(services, mailbox::tell);
        this.authExpiry = new AuthExpiry(services, mailbox, this::onAuthExpired);
        this.reauthentication = new Reauthentication(clientId, services.guard(), mailbox::tell, connection::write,
                new Reauthentication.Result() {
                    @Override
                    public void allowed(SessionGuard.Verdict verdict) {
                        reauthenticated(verdict);
                    }

                    @Override
                    public void failed(ReasonCode code, String reason) {
                        disconnect(code, reason, true);
                    }
                });
    }

    public String clientId() {
        return clientId;
    }

    /** Whether this session's messages wait in a DEVICE queue in Redis; for metrics, may lag a step. */
    public boolean queuesInRedis() {
        return services.deviceQueues() != null && queuing && ClientTypes.DEVICE.equals(clientType);
    }

    /** DEVICE or APPLICATION, as the last CONNECT's authentication decided; for metrics, may lag a step. */
    public String clientType() {
        return clientType;
    }

    /** Whether a client is connected to this session now; may lag by one mailbox step. */
    public boolean isOnline() {
        return online;
    }

    // ======================================================================== inputs (any thread)

    /**
     * Marks a CONNECT as on its way to this session. Called by the registry under its lock for this
     * client ID, so it never interleaves with {@link SessionRegistry#tryEnd}: an actor expecting a
     * CONNECT does not end, and the connection's packets keep going to the actor that answers them.
     * {@link #attach} follows, outside the lock.
     */
    void expectConnect() {
        connectsPending.incrementAndGet();
    }

    /**
     * Queues the CONNECT announced by {@link #expectConnect}. Called once the registry holds this
     * actor for the client ID, never under the registry's lock: the CONNECT's answer may come back
     * from the connect sequence before a map update still in progress would have made the actor
     * visible, and the answer would find no session to go to.
     */
    void attach(ClientConnection conn, Packet.Connect connect, String assignedClientId) {
        boolean queued = mailbox.tell(() -> {
            connectsPending.decrementAndGet();
            connects.connect(conn, connect, assignedClientId);
        });
        if (!queued) {
            // Cannot happen while expectConnect holds the actor open; refused rather than left unanswered.
            connectsPending.decrementAndGet();
            conn.sendAndClose(Packet.ConnAck.refuse(ReasonCode.SERVER_UNAVAILABLE, "session closed; connect again"));
        }
    }

    /**
     * Whether a CONNECT is queued and not yet processed, or waits for the connect sequence's answer;
     * read by the registry under its lock, from this actor's own turn.
     */
    boolean hasConnectPending() {
        return connectsPending.get() > 0 || !connects.isEmpty();
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

    /** The transport found a protocol violation in what {@code conn} sent: end it with {@code code}. */
    public void violation(ClientConnection conn, ReasonCode code, String reason) {
        mailbox.tell(() -> onViolation(conn, code, reason));
    }

    /**
     * The network connection ended without DISCONNECT, or the transport closed it. A connection
     * whose CONNECT is still waiting is dropped with it: checking, sequencing and accepting a client
     * that left only to detach it would cost a storm's auth threads and Kafka writes for nothing.
     */
    public void connectionLost(ClientConnection conn) {
        mailbox.tell(() -> {
            if (connection.is(conn)) {
                detach(true);
            } else {
                connects.lost(conn);
            }
        });
    }

    /** Nothing arrived within 1.5 times the keep-alive [MQTT-3.1.2-22]. */
    public void keepAliveExpired(ClientConnection conn) {
        mailbox.tell(() -> ifCurrent(conn, () -> disconnect(ReasonCode.KEEP_ALIVE_TIMEOUT, "keep alive timeout", true)));
    }

    /** The socket can take more data: send what QoS 0 traffic was held back. */
    public void writable(ClientConnection conn) {
        mailbox.tell(() -> {
            if (connection.is(conn)) {
                outbound.drainQos0();
                pump();
                deviceQueue.read();
            }
        });
    }

    /** A message routed to this client; {@code matched} are its subscriptions that matched. */
    public void deliver(BrokerMessage message, List<Subscription> matched) {
        inbox.offer(message, matched);
    }

    /** The connect sequence's answer to one of this session's CONNECTs. */
    void accepted(NodeCommand.ConnectAccepted answer) {
        mailbox.tell(() -> connects.accepted(answer));
    }

    /** Another node took this client ID over. */
    void takenOver(NodeCommand.TakeOver command) {
        if (!mailbox.tell(() -> onTakenOver(command))) {
            // The session ended here since the registry found it: nothing held, and what it wrote is ahead.
            services.cluster().event(new SessionEvent.Released(clientId, command.epoch()));
        }
    }

    /** The session's DEVICE queue in Redis grew by an entry. */
    void queued(NodeCommand.Queued command) {
        mailbox.tell(() -> deviceQueue.queued(command));
    }

    /**
     * The node stops: 0x8B Server shutting down, or 0x9C Use another server with {@code serverReference}
     * when one is configured.
     */
    void serverShutdown(String serverReference) {
        mailbox.tell(() -> {
            // The client did nothing wrong: its will is not published on our shutdown, and its
            // session stays for it to resume elsewhere [MQTT-3.14.2].
            if (serverReference == null) {
                disconnect(ReasonCode.SERVER_SHUTTING_DOWN, "server shutting down", false);
            } else {
                sendElsewhere(serverReference, "server shutting down; use " + serverReference);
            }
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
            connects.refuseAll();
            sendElsewhere(serverReference, "this node is fenced off from the cluster; connect to another node");
        });
    }

    /**
     * An operator drained the node: CONNECTs still waiting are refused with 0x9C and the client is
     * sent elsewhere (0x9C Use another server, with {@code serverReference} when one is configured).
     * No will is published: the client is expected to reconnect to another node at once.
     */
    void drained(String serverReference) {
        mailbox.tell(() -> {
            connects.refuseAll(ReasonCode.USE_ANOTHER_SERVER, ConnectWaits.DRAINING);
            sendElsewhere(serverReference, "this node is drained; connect to another node");
        });
    }

    /** Admin: what the session holds now; completes in the actor's next turn. */
    public CompletableFuture<SessionView> inspect() {
        CompletableFuture<SessionView> view = new CompletableFuture<>();
        if (!mailbox.tell(() -> view.complete(new SessionView(clientId, online, epoch, clientType,
                lifetime.expirySeconds(), List.copyOf(subscriptions.all().values()), outbound.inFlightCount(),
                outbound.queuedCount())))) {
            view.complete(null); // the session has ended
        }
        return view;
    }

    /** Admin: ends the client's connection with 0x98 Administrative action; its will is published. */
    public void disconnectByAdmin(String reason) {
        mailbox.tell(() -> disconnect(ReasonCode.ADMINISTRATIVE_ACTION, reason, true));
    }

    /**
     * Admin, from any node: closes the connection with 0x98 and, with {@code endSession}, ends the
     * session as its expiry would (see {@link #onAdminDisconnect}).
     */
    void adminDisconnect(NodeCommand.AdminDisconnect command) {
        mailbox.tell(() -> onAdminDisconnect(command));
    }

    /**
     * The security settings changed (a credential, its rules, a blocked entry): {@code review} decides
     * in the session's next turn whether it keeps its rights, gets new ones (subscriptions they forbid
     * are removed), or its client is disconnected.
     */
    public void review(ClientAccess.Review review) {
        mailbox.tell(() -> onReview(review));
    }

    // ======================================================================== packets from the client

    private void onPacketFrom(ClientConnection conn, Packet packet) {
        if (!connection.is(conn)) {
            if (connects.authenticating(conn, packet)) {
                return; // a step of its CONNECT's enhanced authentication
            }
            // From a connection still waiting for its CONNACK (it may send before [MQTT-3.1.4-5 note]),
            // or from one this session already dropped (taken over or closed).
            connects.defer(conn, () -> onPacketFrom(conn, packet));
            return;
        }
        // Packets wait in the gate, in order, while a PUBLISH before them cannot go on yet.
        if (gate.admit(packet, applicationBacklogs(), () -> onPacketFrom(conn, packet), () -> process(conn, packet))) {
            process(conn, packet);
        }
    }

    private void process(ClientConnection conn, Packet packet) {
        if (!connection.is(conn)) {
            return; // the connection ended while its packet waited
        }
        try {
            onPacket(packet);
        } catch (ProtocolViolation v) {
            disconnect(v.reasonCode(), v.getMessage(), true);
        }
    }

    private void onPacket(Packet packet) {
        // Java 17: no pattern matching in switch yet.
        if (packet instanceof Packet.Publish p) {
            inbound.publish(p);
        } else if (packet instanceof Packet.Ack a) {
            onAck(a);
        } else if (packet instanceof Packet.Subscribe s) {
            Subscriptions.Subscribed done = subscriptions.subscribe(s, applicationBacklogs() ? appBacklogs : null);
            connection.write(done.subAck());
            done.retained().forEach(this::enqueue);
        } else if (packet instanceof Packet.Unsubscribe u) {
            connection.write(subscriptions.unsubscribe(u, appBacklogs));
        } else if (packet instanceof Packet.PingReq) {
            connection.write(new Packet.PingResp());
        } else if (packet instanceof Packet.Disconnect d) {
            onDisconnect(d);
        } else if (packet instanceof Packet.Connect) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "second CONNECT"); // [MQTT-3.1.0-2]
        } else if (packet instanceof Packet.Auth a) {
            onAuth(a);
        } else {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR,
                    packet.getClass().getSimpleName() + " is not sent by clients");
        }
    }

    private void onReview(ClientAccess.Review review) {
        if (epoch == 0 && !connection.isOnline()) {
            return; // no session yet: its CONNECT is authenticated with the new settings
        }
        ClientConnection conn = connection.current();
        ClientAccess.Outcome outcome = review.review(new ClientAccess.Subject(clientId, access,
                conn == null ? null : conn.address(), conn != null));
        if (outcome.replacement() != null) {
            grant(outcome.replacement());
            if (connection.isOnline()) {
                authExpiry.arm(access);
            }
            subscriptions.keepAllowed(access, applicationBacklogs() ? appBacklogs : null);
        }
        if (outcome.disconnect() != null) {
            disconnect(outcome.disconnect(), outcome.reason(), true);
        }
    }

    /** What the client may do from now on. */
    private void grant(ClientAccess granted) {
        String before = access.credentialId();
        access = granted;
        registry.credential(this, before, granted.credentialId());
    }

    /**
     * The credential the session's client authenticated with, or null; read by the registry as the
     * session ends, in the actor's own turn.
     */
    String credential() {
        return access.credentialId();
    }

    /** MQTT 5 re-authentication (4.12.1); see {@link Reauthentication}. */
    private void onAuth(Packet.Auth auth) {
        reauthentication.auth(auth);
    }

    /** A re-authentication succeeded: the client's rights are the new verdict's from now on. */
    private void reauthenticated(SessionGuard.Verdict verdict) {
        if (verdict.access() != null) {
            grant(verdict.access());
            subscriptions.keepAllowed(access, applicationBacklogs() ? appBacklogs : null);
            authExpiry.arm(access);
        }
    }

    private void onAck(Packet.Ack a) {
        if (a.type() == Packet.AckType.PUBREL) {
            inbound.released(a.packetId());
            return;
        }
        OutboundFlow.InFlight done = outbound.acknowledged(a);
        if (done != null) {
            if (done.origin() != null) {
                done.origin().completed();
            }
            deviceQueue.read();
            pump();
        }
    }

    private void onDisconnect(Packet.Disconnect d) {
        if (d.sessionExpirySeconds() >= 0) {
            lifetime.expiryOnDisconnect(d.sessionExpirySeconds());
        }
        // 0x04 asks for the will; any other DISCONNECT from the client discards it [MQTT-3.1.2-10].
        boolean publishWill = d.reasonCode() == ReasonCode.DISCONNECT_WITH_WILL;
        ClientConnection conn = connection.current();
        detach(publishWill);
        conn.sendAndClose(null);
    }

    private void onViolation(ClientConnection conn, ReasonCode code, String reason) {
        if (connection.is(conn)) {
            disconnect(code, reason, true);
        } else if (!connects.defer(conn, () -> onViolation(conn, code, reason))) {
            conn.sendAndClose(null);
        }
    }

    /** Runs {@code action} if {@code conn} is the session's connection, or once it is if it waits for its CONNACK. */
    private void ifCurrent(ClientConnection conn, Runnable action) {
        if (connection.is(conn)) {
            action.run();
        } else {
            connects.defer(conn, () -> ifCurrent(conn, action));
        }
    }

    // ======================================================================== delivery to the client

    private void onDeliver(BrokerMessage message, List<Subscription> matched) {
        if (ended) {
            services.drops().count(MessageDrops.Reason.NO_SESSION, clientId, message.topic());
            return;
        }
        Delivery d = Delivery.of(clientId, message, matched);
        if (d != null) {
            enqueue(d);
        }
    }

    private void enqueue(Delivery d) {
        if (outbound.enqueue(d)) {
            pump();
        }
    }

    /** Fills the client's receive window: from the session's memory first, then from its backlogs. */
    private void pump() {
        outbound.sendQueued();
        appBacklogs.drain();
    }

    /**
     * After every mailbox turn: the next share of a delivery backlog goes behind the other actors'
     * turns, and what the turn wrote is flushed at once.
     */
    private void endOfTurn() {
        inbox.endOfTurn();
        connection.flush();
    }

    /** Whether this session's messages wait in Kafka backlogs: it is a persistent APPLICATION session. */
    private boolean applicationBacklogs() {
        return services.appBacklogs() != null && queuing && ClientTypes.APPLICATION.equals(clientType);
    }

    // ======================================================================== the session's steps

    /** The connect sequence accepted a CONNECT: its connection takes the session over. */
    private void accept(ConnectWaits.Pending p, NodeCommand.ConnectAccepted answer) {
        ClientConnection conn = p.conn();
        Packet.Connect connect = p.connect();
        boolean sessionPresent = answer.sessionPresent();
        epoch = answer.epoch();
        queuing = answer.queuing();
        if (connection.isOnline()) {
            boolean keepWillPending = !connect.cleanStart() && lifetime.hasDelayedWill();
            connection.closeTakenOver(connection.current());
            detachConnection();
            if (!keepWillPending) {
                lifetime.publishWillNow();
            }
        }
        // A reconnect cancels a will still waiting for its delay, and the session's expiry [MQTT-3.1.3-9].
        lifetime.cancelTimers();
        expiryDue = false;
        // The store in Redis is cleared when the connect sequence says so: a persistent session this
        // CONNECT ends leaves it, and a persistent session starts without what an earlier one left.
        // Between sessions that never persist, a CONNECT costs Redis nothing.
        if (!sessionPresent) {
            clearSessionState(answer.clearStore());
        } else {
            if (answer.clearStore()) {
                clearStore(); // a session that did not persist goes on as one that does
            }
            if (subscriptions.isEmpty()) {
                subscriptions.adopt();
            }
        }
        grant(p.access());
        clientType = p.verdict() != null && p.verdict().clientType() != null ? p.verdict().clientType()
                : services.clientTypes().of(clientId);
        if (sessionPresent) {
            // The session's subscriptions were made under the rights of an earlier connection.
            subscriptions.keepAllowed(access, null);
        }
        authExpiry.arm(access);
        connection.attach(conn, connect, services.limits());
        online = true;
        inbound.connected();
        outbound.connected();
        lifetime.connected(connect);
        reauthentication.connected(conn, connect);
        connection.connAck(connect, clientId, p.assignedClientId(), sessionPresent, lifetime.expirySeconds(),
                services.limits(), p.authData());

        boolean fromDeviceQueue = services.deviceQueues() != null && queuing && ClientTypes.DEVICE.equals(clientType);
        appBacklogs.close();
        outbound.forget(AppBacklogReader::isRecord); // the backlog sends them again, with DUP
        if (applicationBacklogs()) {
            appBacklogs.open(!sessionPresent, subscriptions.all());
        }
        deviceQueue.connected(fromDeviceQueue, epoch);
        if (fromDeviceQueue) {
            // Entries of the queue in Redis come from there, with their packet identifiers and DUP.
            outbound.forget(DeviceQueueReader::isEntry);
        }
        log.debug("{} connected from {} ({}, session present {})", clientId, conn.remoteAddress(), connect.version(),
                sessionPresent);
        // Resume: unacknowledged messages first, in their original order, with DUP set [MQTT-4.4.0-1].
        outbound.resend();
        pump();
        deviceQueue.read();
    }

    /** A CONNECT was refused: the session ends here if it never had a connection here, or expired meanwhile. */
    private void connectRefused() {
        if (expiryDue && !connection.isOnline() && !hasConnectPending()) {
            expire();
            return;
        }
        if (epoch == 0 && !connection.isOnline() && connects.isEmpty()) {
            endHere(); // nothing to keep
        }
    }

    /** Server-side DISCONNECT (MQTT 5 only: 3.1.1 has none, the connection just closes) [MQTT-4.13.1-1]. */
    private void disconnect(ReasonCode code, String reason, boolean publishWill) {
        ClientConnection conn = connection.current();
        if (conn == null) {
            return;
        }
        detach(publishWill);
        conn.sendAndClose(conn.version().isV5() ? Packet.Disconnect.of(code, connection.reasonString(reason)) : null);
    }

    /** Ends the connection with 0x9C Use another server; no will, the session stays for the client to resume. */
    private void sendElsewhere(String serverReference, String reason) {
        ClientConnection conn = connection.current();
        if (conn == null) {
            return;
        }
        String reasonString = connection.reasonString(reason);
        detach(false);
        conn.sendAndClose(conn.version().isV5()
                ? new Packet.Disconnect(ReasonCode.USE_ANOTHER_SERVER, -1, reasonString, serverReference) : null);
    }

    /** The connection ended: the will and the session's expiry take their course. */
    private void detach(boolean publishWill) {
        detachConnection();
        SessionEvent.Disconnected event = new SessionEvent.Disconnected(clientId, epoch, lifetime.expirySeconds(),
                lifetime.disconnected(publishWill), services.clock().getAsLong());
        services.cluster().event(event);
        inboundQos2.disconnected(lifetime.expirySeconds());
        if (lifetime.expirySeconds() == 0) {
            endSession();
        } else {
            lifetime.startExpiry();
        }
    }

    private void detachConnection() {
        authExpiry.cancel();
        appBacklogs.close();
        connection.detach();
        online = false;
        outbound.disconnected();
        deviceQueue.disconnected();
    }

    /** The client's authentication ran out (its token expired): it must connect again with a new one. */
    private void onAuthExpired() {
        if (connection.isOnline()) {
            disconnect(ReasonCode.NOT_AUTHORIZED, "authentication expired", true);
        }
    }

    private void onWillDue() {
        if (!connection.isOnline()) {
            lifetime.publishWillNow();
            services.cluster().event(new SessionEvent.WillPublished(clientId, epoch));
        }
    }

    private void onExpired() {
        // A client that came back before the session expired has its CONNECT decide: accepted, the
        // session goes on; refused, it ends then (see connectRefused).
        expiryDue = !connection.isOnline() && hasConnectPending();
        if (!connection.isOnline() && !expiryDue) {
            expire();
        }
    }

    private void expire() {
        expiryDue = false;
        lifetime.publishWillNow(); // a delayed will is due when the session ends [MQTT-3.1.3-9]
        services.cluster().event(new SessionEvent.Expired(clientId, epoch));
        endSession();
    }

    /**
     * The operator saw connection {@code epoch}; a client that reconnected since is left alone. The
     * connection is closed by the server, so its will is published [MQTT-3.1.2-8]. Ending the
     * session takes the expiry path: with a connection, the session ends with it (expiry 0, so its
     * DEVICE queue is deleted and counted, its subscriptions and state removed cluster-wide, an
     * APPLICATION backlog deleted by the connect sequence); without, it expires now.
     */
    private void onAdminDisconnect(NodeCommand.AdminDisconnect command) {
        if (command.epoch() != 0 && command.epoch() != epoch) {
            return;
        }
        if (connection.isOnline()) {
            if (command.endSession()) {
                lifetime.endsWithConnection();
            }
            disconnect(ReasonCode.ADMINISTRATIVE_ACTION, "disconnected by an administrator", true);
        } else if (command.endSession() && epoch != 0) {
            lifetime.cancelTimers();
            onExpired();
        }
    }

    private void onTakenOver(NodeCommand.TakeOver command) {
        try {
            takeOver(command);
        } finally {
            // After whatever this session wrote about its connection: the waiting CONNECT is decided now.
            services.cluster().event(new SessionEvent.Released(clientId, command.epoch()));
        }
    }

    private void takeOver(NodeCommand.TakeOver command) {
        if (command.epoch() <= epoch) {
            return; // about a connection older than ours
        }
        if (connection.isOnline()) {
            // Its will is the connect sequence's to publish.
            connection.closeTakenOver(connection.current());
            detachConnection();
        }
        lifetime.cancelTimers();
        expiryDue = false; // the session's new node decides its end
        lifetime.discardWill();
        // What came from the DEVICE queue or a backlog stays there for the session's new node.
        services.drops().count(MessageDrops.Reason.SESSION_MOVED, outbound.clear(origin -> true));
        inboundQos2.movedAway();
        subscriptions.movedAway(); // the session's new node owns them now
        if (connects.isEmpty()) {
            endHere();
        }
    }

    private void endSession() {
        // A session that never persisted (expiry 0 on every connection) has nothing in Redis: its start
        // cleared what an earlier session left, and neither a DEVICE queue entry nor a QoS 2 receipt
        // is written for it since. Not asking saves two Redis commands per short-lived connection.
        clearSessionState(queuing);
        lifetime.ended();
        // A CONNECT queued meanwhile starts the next session with this actor, and the connect
        // sequence numbers a new session's connections from 1 again: nothing of this one's stays.
        epoch = 0;
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

    /** Deletes the client ID's DEVICE queue and QoS 2 receipts in Redis. */
    private void clearStore() {
        deviceQueue.deleteQueue();
        inboundQos2.deleteReceipts();
    }

    /** @param inRedis whether the session may have a DEVICE queue or QoS 2 receipts in Redis to delete */
    private void clearSessionState(boolean inRedis) {
        if (inRedis) {
            clearStore();
        }
        subscriptions.ended();
        inboundQos2.ended();
        // Entries of the DEVICE queue are counted as the queue is deleted; the rest only this session held.
        services.drops().count(MessageDrops.Reason.SESSION_ENDED, outbound.clear(DeviceQueueReader::isEntry));
    }
}
