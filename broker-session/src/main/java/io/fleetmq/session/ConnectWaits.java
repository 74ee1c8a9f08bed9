package io.fleetmq.session;

import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.log.LogLimit;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.session.cluster.ClientTypes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CONNECTs on their way to acceptance: authenticated, then put to the connect sequence (DESIGN.md,
 * promise 3), whose answer the CONNACK waits for, so that one client ID has one live connection
 * cluster-wide. What a waiting connection sends meanwhile (it may, before CONNACK) waits with it.
 */
final class ConnectWaits {

    private static final Logger log = LoggerFactory.getLogger(ConnectWaits.class);

    /** Shared by every client: a storm of failures costs a few lines, see {@link LogLimit}. */
    private static final LogLimit LOG_LIMIT = new LogLimit(20, java.time.Duration.ofSeconds(10));

    /**
     * A CONNECT waiting for its answer; what its connection does meanwhile waits in {@code deferred}.
     *
     * @param exchange an enhanced authentication waiting for the client's next AUTH, else null
     * @param authData the Authentication Data for the CONNACK of a finished enhanced authentication, else null
     * @param asked    the guard's verdict while it is on its way, else null: cancelled if the CONNECT stops
     *                 waiting, so that no auth thread checks it
     */
    record Pending(ClientConnection conn, Packet.Connect connect, String assignedClientId, List<Runnable> deferred,
                   ScheduledFuture<?> timeout, SessionGuard.Verdict verdict, SessionGuard.Exchange exchange,
                   byte[] authData, CompletableFuture<?> asked) {

        Pending authenticated(SessionGuard.Verdict v) {
            return new Pending(conn, connect, assignedClientId, deferred, timeout, v, null, authData, null);
        }

        Pending awaiting(SessionGuard.Exchange next) {
            return new Pending(conn, connect, assignedClientId, deferred, timeout, verdict, next, authData, asked);
        }

        Pending finalData(byte[] data) {
            return new Pending(conn, connect, assignedClientId, deferred, timeout, verdict, null, data, asked);
        }

        Pending asking(CompletableFuture<?> verdict) {
            return new Pending(conn, connect, assignedClientId, deferred, timeout, this.verdict, exchange, authData,
                    verdict);
        }

        /** Whether the CONNECT is in an enhanced authentication that has not decided yet. */
        boolean inExchange() {
            return verdict == null && connect.authenticationMethod() != null;
        }

        /** What the client may do, once authenticated. */
        ClientAccess access() {
            return verdict == null || verdict.access() == null ? ClientAccess.ALLOW_ALL : verdict.access();
        }
    }

    /** Makes an accepted CONNECT the session's connection. */
    interface Acceptor {
        /** @param answer the connect sequence's: the epoch, whether the session continues and persists */
        void accept(Pending p, NodeCommand.ConnectAccepted answer);
    }

    /** Reason string of a CONNECT refused because the node is drained. */
    static final String DRAINING = "this node is drained; connect to another node";

    private final String clientId;
    private final SessionServices services;
    private final SessionGuard guard;
    private final Consumer<Runnable> tell;
    private final LongSupplier epoch;
    private final Acceptor acceptor;
    private final Runnable refused;
    private final Consumer<Runnable> resumeInboundQos2;
    private final java.util.function.BooleanSupplier draining;
    /**
     * By request ID, in arrival order; null while no CONNECT waits, which is most of a session's life
     * (an idle connection's memory is what limits connections per node).
     */
    private LinkedHashMap<String, Pending> pending;
    /** Where each CONNECT put to the connect sequence is on its way, for the log of one left unanswered. */
    private java.util.Map<String, String> progress;

    /**
     * @param tell              runs a task in a later turn of the session's mailbox
     * @param epoch             the connect sequence's number of the session's current (or last) connection
     * @param acceptor          makes an accepted CONNECT the session's connection
     * @param refused           told when a CONNECT was refused
     * @param resumeInboundQos2 runs its task once the QoS 2 receipts of earlier connections are known
     * @param draining          whether an operator drained the node: CONNECTs are refused
     */
    ConnectWaits(String clientId, SessionServices services, SessionGuard guard, Consumer<Runnable> tell,
            LongSupplier epoch, Acceptor acceptor, Runnable refused, Consumer<Runnable> resumeInboundQos2,
            java.util.function.BooleanSupplier draining) {
        this.draining = draining;
        this.clientId = clientId;
        this.services = services;
        this.guard = guard;
        this.tell = tell;
        this.epoch = epoch;
        this.acceptor = acceptor;
        this.refused = refused;
        this.resumeInboundQos2 = resumeInboundQos2;
    }

    /** Whether {@code access} lets the client publish its will. */
    static boolean willAllowed(ClientAccess access, Packet.Will will) {
        return !access.authorizePublish(will.topic(), will.qos(), will.retain()).isError();
    }

    private Pending pending(String requestId) {
        return pending == null ? null : pending.get(requestId);
    }

    private void put(String requestId, Pending p) {
        if (pending == null) {
            pending = new LinkedHashMap<>(4);
        }
        pending.put(requestId, p);
    }

    /** Removes a waiting CONNECT, and its progress; the maps go when the last one does. */
    private Pending remove(String requestId) {
        if (pending == null) {
            return null;
        }
        Pending p = pending.remove(requestId);
        if (p != null && p.asked() != null) {
            p.asked().cancel(false); // no longer waited for; done already if it came
        }
        if (progress != null) {
            progress.remove(requestId);
        }
        if (pending.isEmpty()) {
            pending = null;
            progress = null;
        }
        return p;
    }

    /** Notes where a waiting CONNECT is on its way. */
    private void progress(String requestId, String stage) {
        if (pending == null || !pending.containsKey(requestId)) {
            return;
        }
        if (progress == null) {
            progress = new java.util.HashMap<>(4);
        }
        progress.put(requestId, stage);
    }

    boolean isEmpty() {
        return pending == null;
    }

    /** Holds {@code again} until {@code conn}'s CONNECT is decided; false if {@code conn} is not waiting. */
    boolean defer(ClientConnection conn, Runnable again) {
        String requestId = requestOf(conn);
        if (requestId == null) {
            return false;
        }
        pending.get(requestId).deferred().add(again);
        return true;
    }

    /** The request ID of {@code conn}'s waiting CONNECT, or null if it is not waiting. */
    private String requestOf(ClientConnection conn) {
        if (pending != null) {
            for (java.util.Map.Entry<String, Pending> e : pending.entrySet()) {
                if (e.getValue().conn() == conn) {
                    return e.getKey();
                }
            }
        }
        return null;
    }

    /**
     * {@code conn} closed before its CONNECT was decided: it stops waiting, unchecked if its
     * authentication had not started (an auth thread skips it), and no will is published, since
     * the connection was never accepted. An answer of the connect sequence that still comes is
     * handled as one for a CONNECT that timed out. False if {@code conn} was not waiting.
     */
    boolean lost(ClientConnection conn) {
        String requestId = requestOf(conn);
        if (requestId == null) {
            return false;
        }
        remove(requestId).timeout().cancel(false);
        refused.run();
        return true;
    }

    /** A CONNECT for this session: authenticated, then put to the connect sequence. */
    void connect(ClientConnection conn, Packet.Connect connect, String assignedClientId) {
        if (!services.cluster().serving()) {
            // A node that cannot confirm its place in the cluster must not take sessions [MQTT-3.2.2-7].
            conn.sendAndClose(Packet.ConnAck.refuse(ReasonCode.SERVER_UNAVAILABLE,
                    "this node is fenced off from the cluster; connect to another node"));
            refused.run();
            return;
        }
        if (draining.getAsBoolean()) {
            // The operator moves clients off this node; the load balancer stops sending them soon.
            conn.sendAndClose(Packet.ConnAck.refuse(ReasonCode.USE_ANOTHER_SERVER, DRAINING));
            refused.run();
            return;
        }
        String requestId = UUID.randomUUID().toString();
        ScheduledFuture<?> timeout = services.timers().schedule(() -> tell.accept(() -> unanswered(requestId)),
                services.cluster().connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        put(requestId, new Pending(conn, connect, assignedClientId, new ArrayList<>(), timeout, null, null, null, null));
        SessionGuard.ConnectRequest request = new SessionGuard.ConnectRequest(clientId, connect, conn.address(),
                conn.secure(), conn.peerCertificates());
        if (connect.authenticationMethod() != null) {
            // Enhanced authentication [MQTT-4.12]: AUTH packets go back and forth before the CONNACK.
            step(requestId, guard.startAuthentication(request, connect.authenticationMethod(),
                    connect.authenticationData()));
            return;
        }
        CompletableFuture<SessionGuard.Verdict> verdict = guard.authenticate(request).toCompletableFuture();
        if (verdict.isDone() && !verdict.isCompletedExceptionally()) {
            authenticated(requestId, verdict.join());
        } else {
            // Waits in the guard's queue: a CONNECT that stops waiting (timed out, or its client went)
            // cancels it, so that no auth thread spends a password check on it.
            put(requestId, pending(requestId).asking(verdict));
            verdict.whenComplete((v, e) -> {
                if (e instanceof java.util.concurrent.CancellationException) {
                    return; // this CONNECT stopped waiting and is gone
                }
                if (e != null) {
                    if (LOG_LIMIT.allow()) {
                        log.warn("{}: authentication failed: {}{}",
                                ClientText.of(clientId), e.toString(), LOG_LIMIT.suppressedNote());
                    }
                }
                tell.accept(() -> authenticated(requestId,
                        e != null ? SessionGuard.Verdict.refused(ReasonCode.UNSPECIFIED_ERROR) : v));
            });
        }
    }

    /** Takes the guard's next step of an enhanced authentication, now or in a later turn. */
    private void step(String requestId, java.util.concurrent.CompletionStage<SessionGuard.AuthStep> stage) {
        CompletableFuture<SessionGuard.AuthStep> step = stage.toCompletableFuture();
        if (step.isDone() && !step.isCompletedExceptionally()) {
            stepped(requestId, step.join());
            return;
        }
        Pending waiting = pending(requestId);
        if (waiting != null) {
            put(requestId, waiting.asking(step)); // cancelled, and skipped by the auth thread, if the CONNECT stops waiting
        }
        step.whenComplete((s, e) -> {
            if (e instanceof java.util.concurrent.CancellationException) {
                return; // this CONNECT stopped waiting and is gone
            }
            if (e != null) {
                if (LOG_LIMIT.allow()) {
                    log.warn("{}: enhanced authentication failed: {}{}",
                            ClientText.of(clientId), e.toString(), LOG_LIMIT.suppressedNote());
                }
            }
            tell.accept(() -> stepped(requestId,
                    e != null ? new SessionGuard.AuthStep.Failed(ReasonCode.UNSPECIFIED_ERROR) : s));
        });
    }

    private void stepped(String requestId, SessionGuard.AuthStep step) {
        Pending p = pending(requestId);
        if (p == null) {
            return; // timed out, or the client gave up meanwhile
        }
        if (step instanceof SessionGuard.AuthStep.Continue c) {
            put(requestId, p.awaiting(c.next()));
            p.conn().write(new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, p.connect().authenticationMethod(),
                    c.data()));
            p.conn().flush();
        } else if (step instanceof SessionGuard.AuthStep.Allowed a) {
            put(requestId, p.finalData(a.data()));
            authenticated(requestId, a.verdict());
        } else {
            authenticated(requestId, SessionGuard.Verdict.refused(((SessionGuard.AuthStep.Failed) step).code()));
        }
    }

    /**
     * A packet from a connection whose CONNECT is in an enhanced authentication: the client's AUTH
     * goes to the exchange; anything else but AUTH at its turn is a protocol error (4.12), and
     * DISCONNECT gives up. False if {@code conn} is not in an exchange (its packets wait as usual).
     */
    boolean authenticating(ClientConnection conn, Packet packet) {
        if (pending == null) {
            return false;
        }
        for (var entry : pending.entrySet()) {
            Pending p = entry.getValue();
            if (p.conn() != conn || !p.inExchange()) {
                continue;
            }
            String requestId = entry.getKey();
            if (packet instanceof Packet.Auth auth && p.exchange() != null
                    && auth.reasonCode() == ReasonCode.CONTINUE_AUTHENTICATION
                    && p.connect().authenticationMethod().equals(auth.authenticationMethod())) {
                put(requestId, p.awaiting(null));
                step(requestId, p.exchange().next(auth.authenticationData()));
                return true;
            }
            remove(requestId); // and return: the loop goes no further
            p.timeout().cancel(false);
            if (packet instanceof Packet.Disconnect) {
                p.conn().sendAndClose(null);
            } else {
                p.conn().sendAndClose(Packet.ConnAck.refuse(ReasonCode.PROTOCOL_ERROR, p.exchange() == null
                        ? packet.getClass().getSimpleName() + " before the server's AUTH"
                        : packet.getClass().getSimpleName() + " during the authentication exchange"));
            }
            refused.run();
            return true;
        }
        return false;
    }

    private void authenticated(String requestId, SessionGuard.Verdict verdict) {
        Pending p = pending(requestId);
        if (p == null) {
            return; // timed out meanwhile
        }
        ReasonCode code = verdict.code();
        if (code.isError()) {
            remove(requestId);
            p.timeout().cancel(false);
            p.conn().sendAndClose(Packet.ConnAck.refuse(code, null));
            refused.run();
            return;
        }
        p = p.authenticated(verdict);
        put(requestId, p);
        Packet.Connect connect = p.connect();
        long expiry = services.limits().sessionExpiry(clientId, connect);
        // A will the client may not publish is dropped when it would be published; the cluster
        // (which publishes it should this node go) is not given it at all.
        SessionState.PendingWill will = connect.will() == null || !willAllowed(p.access(), connect.will()) ? null
                : new SessionState.PendingWill(SessionLifetime.willMessage(clientId, services.clock().getAsLong(),
                        connect.will()), connect.will().delaySeconds());
        String type = verdict.clientType() != null ? verdict.clientType() : services.clientTypes().of(clientId);
        SessionEvent.Connect event = new SessionEvent.Connect(requestId, clientId, services.nodeId(),
                services.cluster().incarnation(), connect.cleanStart(), expiry, will, type, clientInfo(p));
        if (expiry > 0 && ClientTypes.APPLICATION.equals(type) && services.appBacklogs() != null
                && !services.cluster().admitsApplicationSession(clientId)) {
            // Each persistent APPLICATION session costs a Kafka topic: the cluster takes a bounded number.
            LimitsExceeded.count(services.meters(), LimitsExceeded.APPLICATION_SESSIONS);
            remove(requestId);
            p.timeout().cancel(false);
            p.conn().sendAndClose(Packet.ConnAck.refuse(ReasonCode.QUOTA_EXCEEDED,
                    "the cluster holds its maximum of APPLICATION sessions"));
            refused.run();
            return;
        }
        if (expiry > 0 && ClientTypes.APPLICATION.equals(type) && services.appBacklogs() != null) {
            // The backlog topic exists before the session does, so nothing routed to it can miss it.
            // Created here, asynchronously, rather than on the connect sequence's thread, which a slow
            // topic creation would hold up for every client ID it sequences.
            services.appBacklogs().ensure(clientId).whenComplete((created, e) -> tell.accept(() -> {
                if (e == null && created) {
                    ask(event);
                } else {
                    unanswered(requestId);
                }
            }));
            return;
        }
        ask(event);
    }

    /** What the cluster shows operators of this connection (admin API: sessions). */
    private SessionState.ClientInfo clientInfo(Pending p) {
        java.net.InetAddress ip = p.conn().address();
        Packet.Connect connect = p.connect();
        return new SessionState.ClientInfo(ip != null ? ip.getHostAddress() : p.conn().remoteAddress(),
                connect.username(), protocol(connect.version()), services.clock().getAsLong(),
                Connection.keepAlive(connect, services.limits()));
    }

    /** The protocol version as operators name it: "5", "3.1.1", "3.1". */
    static String protocol(io.fleetmq.core.mqtt.ProtocolVersion version) {
        return switch (version) {
            case V5 -> "5";
            case V3_1_1 -> "3.1.1";
            case V3_1 -> "3.1";
        };
    }

    private void ask(SessionEvent.Connect event) {
        if (pending(event.requestId()) == null) {
            return; // timed out or refused meanwhile
        }
        progress(event.requestId(), "its session event not stored yet");
        services.cluster().event(event).whenComplete((m, e) -> {
            if (e != null) {
                tell.accept(() -> unanswered(event.requestId()));
            } else {
                tell.accept(() -> progress(event.requestId(),
                        "its session event stored at " + m + ", no answer from the connect sequence"));
            }
        });
    }

    /** No answer in time, or the request could not be stored: CONNACK 0x88 [MQTT-3.2.2-7]. */
    private void unanswered(String requestId) {
        String stage = progress == null ? null : progress.get(requestId);
        Pending p = remove(requestId);
        if (p == null) {
            return;
        }
        p.timeout().cancel(false);
        if (LOG_LIMIT.allow()) {
            log.warn("{}: CONNECT not decided within {} ({}); refused with server unavailable{}",
                    ClientText.of(clientId), services.cluster().connectTimeout(),
                    p.verdict() == null ? "not authenticated yet" : stage == null ? "authenticated, not asked yet" : stage,
                    LOG_LIMIT.suppressedNote());
        }
        p.conn().sendAndClose(Packet.ConnAck.refuse(ReasonCode.SERVER_UNAVAILABLE, "cluster did not answer in time"));
        refused.run();
    }

    /** The connect sequence's answer to one of this session's CONNECTs. */
    void accepted(NodeCommand.ConnectAccepted answer) {
        Pending p = pending(answer.requestId());
        if (p != null && answer.sessionPresent() && !answer.clearStore()) {
            // The QoS 2 receipts the session's earlier connections left (on any node) are known
            // before this connection's packets are handled, which wait meanwhile [MQTT-4.3.3-10].
            // A session that did not persist stored none: what Redis holds is cleared instead.
            p.timeout().cancel(false);
            resumeInboundQos2.accept(() -> answered(answer));
            return;
        }
        answered(answer);
    }

    private void answered(NodeCommand.ConnectAccepted answer) {
        Pending p = remove(answer.requestId());
        if (p == null) {
            if (answer.epoch() == epoch.getAsLong()) {
                // The answer repeated (the sequence read its events again after a failed write, or a
                // new owner of the partition did): that is the connection this session has now, and
                // a Disconnected event for its epoch would end it.
                return;
            }
            // Refused here after waiting too long, but accepted by the sequence: say it is gone again.
            // The session keeps the expiry it was accepted with: this node's copy of the sessions may
            // not know it yet, and 0 would end a persistent session and everything queued for it.
            SessionEvent.Disconnected gone = new SessionEvent.Disconnected(clientId, answer.epoch(),
                    SessionEvent.Disconnected.KEEP_EXPIRY, null, services.clock().getAsLong());
            services.cluster().event(gone);
            return;
        }
        p.timeout().cancel(false);
        if (answer.epoch() < epoch.getAsLong()) {
            p.conn().sendAndClose(null); // a later connection was accepted while this one learned its receipts
            return;
        }
        acceptor.accept(p, answer);
        for (Runnable deferred : p.deferred()) {
            deferred.run();
        }
    }

    /** The node fenced itself: every waiting CONNECT is refused with 0x88. */
    void refuseAll() {
        refuseAll(ReasonCode.SERVER_UNAVAILABLE, "this node is fenced off from the cluster; connect to another node");
    }

    /** Every waiting CONNECT is refused with {@code code} (3.1.1: 3 Server unavailable). */
    void refuseAll(ReasonCode code, String reason) {
        if (pending == null) {
            return;
        }
        for (String requestId : List.copyOf(pending.keySet())) {
            Pending p = remove(requestId);
            p.timeout().cancel(false);
            p.conn().sendAndClose(Packet.ConnAck.refuse(code, reason));
        }
    }
}
