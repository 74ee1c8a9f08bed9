package io.fleetmq.session;

import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.log.LogLimit;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-authentication of a connected MQTT 5 client (4.12.1): its AUTH 0x19 starts an exchange with
 * the method of its CONNECT, answered with AUTH 0x18 until the guard decides; success is AUTH
 * 0x00 and new rights, failure ends the connection (DISCONNECT 0x87). The client's other packets
 * go on meanwhile. Lives in the session's actor: no locks.
 */
final class Reauthentication {

    private static final Logger log = LoggerFactory.getLogger(Reauthentication.class);

    /** Shared by every client: a storm of failures costs a few lines, see {@link LogLimit}. */
    private static final LogLimit LOG_LIMIT = new LogLimit(20, java.time.Duration.ofSeconds(10));

    /** What the session does with the result. */
    interface Result {
        void allowed(SessionGuard.Verdict verdict);

        void failed(ReasonCode code, String reason);
    }

    private final String clientId;
    private final SessionGuard guard;
    private final Consumer<Runnable> tell;
    private final Consumer<Packet> write;
    private final Result result;
    private ClientConnection conn;
    private Packet.Connect connect;
    /** Set while the exchange waits for the client's next AUTH. */
    private SessionGuard.Exchange exchange;
    /** Set from the client's AUTH 0x19 until the guard decided. */
    private boolean running;

    /**
     * @param tell  runs a task in a later turn of the session's mailbox
     * @param write writes a packet to the session's connection
     */
    Reauthentication(String clientId, SessionGuard guard, Consumer<Runnable> tell, Consumer<Packet> write,
            Result result) {
        this.clientId = clientId;
        this.guard = guard;
        this.tell = tell;
        this.write = write;
        this.result = result;
    }

    /** A connection was accepted with {@code connect}; an exchange of an earlier one is dropped. */
    void connected(ClientConnection conn, Packet.Connect connect) {
        this.conn = conn;
        // Kept only where re-authentication is possible (an Authentication Method), and without the
        // password, will and first authentication data: nothing a re-authentication uses, and no
        // reason to hold a secret in memory for the life of the connection.
        this.connect = connect.authenticationMethod() == null ? null : new Packet.Connect(connect.version(),
                connect.clientId(), connect.cleanStart(), connect.keepAliveSeconds(), connect.username(), null, null,
                connect.sessionExpirySeconds(), connect.receiveMaximum(), connect.maximumPacketSize(),
                connect.topicAliasMaximum(), connect.requestResponseInformation(), connect.requestProblemInformation(),
                connect.authenticationMethod(), connect.userProperties(), null);
        this.exchange = null;
        this.running = false;
    }

    /**
     * The client's AUTH on its open connection.
     *
     * @throws ProtocolViolation 0x82 if the CONNECT had no Authentication Method, the method differs
     *                           from it, or the AUTH does not fit the exchange's state
     */
    void auth(Packet.Auth auth) {
        String method = connect == null ? null : connect.authenticationMethod();
        if (method == null) {
            // 4.12: a client that did not authenticate with a method must not send AUTH.
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "AUTH without an Authentication Method in CONNECT");
        }
        if (!method.equals(auth.authenticationMethod())) {
            // 4.12.1: re-authentication uses the method of the CONNECT.
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "AUTH with another Authentication Method than CONNECT's");
        }
        if (auth.reasonCode() == ReasonCode.RE_AUTHENTICATE && !running) {
            running = true;
            step(guard.startReauthentication(new SessionGuard.ConnectRequest(clientId, connect, conn.address(),
                    conn.secure()), method, auth.authenticationData()));
        } else if (auth.reasonCode() == ReasonCode.CONTINUE_AUTHENTICATION && exchange != null) {
            SessionGuard.Exchange next = exchange;
            exchange = null;
            step(next.next(auth.authenticationData()));
        } else {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "AUTH 0x" + Integer.toHexString(auth.reasonCode().value())
                    + (running ? " while a re-authentication is in progress" : " without a re-authentication"));
        }
    }

    private void step(CompletionStage<SessionGuard.AuthStep> stage) {
        ClientConnection forConn = conn;
        stage.whenComplete((s, e) -> tell.accept(() -> {
            if (e != null) {
                if (LOG_LIMIT.allow()) {
                    log.warn("{}: re-authentication failed: {}{}",
                            ClientText.of(clientId), e.toString(), LOG_LIMIT.suppressedNote());
                }
            }
            stepped(forConn, e != null ? new SessionGuard.AuthStep.Failed(ReasonCode.UNSPECIFIED_ERROR) : s);
        }));
    }

    private void stepped(ClientConnection forConn, SessionGuard.AuthStep step) {
        if (forConn != conn || !running) {
            return; // the connection ended meanwhile
        }
        String method = connect.authenticationMethod();
        if (step instanceof SessionGuard.AuthStep.Continue c) {
            exchange = c.next();
            write.accept(new Packet.Auth(ReasonCode.CONTINUE_AUTHENTICATION, method, c.data()));
            return;
        }
        running = false;
        if (step instanceof SessionGuard.AuthStep.Allowed a) {
            write.accept(new Packet.Auth(ReasonCode.SUCCESS, method, a.data()));
            result.allowed(a.verdict());
        } else {
            result.failed(ReasonCode.NOT_AUTHORIZED, "re-authentication failed");
        }
    }
}
