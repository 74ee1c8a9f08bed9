package io.fleetmq.session;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import java.net.InetAddress;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Who may connect: the node's authentication of CONNECTs, asked before the connect sequence so
 * that an unauthenticated CONNECT never takes over a session or triggers its will. Its answer
 * carries the {@link ClientAccess} the session then checks PUBLISH, SUBSCRIBE and the will against.
 * The default lets everyone in with every right, as the broker does without security settings.
 */
public interface SessionGuard {

    /** Lets everyone in, with every right. */
    SessionGuard ALLOW_ALL = new SessionGuard() {
    };

    /**
     * What authentication knows of a CONNECT.
     *
     * @param clientId the client ID (the one the broker assigned, if the client sent none)
     * @param address  the client's IP address, or null if unknown
     * @param tls      whether the connection is encrypted
     * @param certificates the client's verified TLS certificate chain, leaf first; empty when it presented none
     */
    record ConnectRequest(String clientId, Packet.Connect connect, InetAddress address, boolean tls,
            List<X509Certificate> certificates) {

        public ConnectRequest {
            certificates = certificates == null ? List.of() : List.copyOf(certificates);
        }

        /** A CONNECT without client certificate. */
        public ConnectRequest(String clientId, Packet.Connect connect, InetAddress address, boolean tls) {
            this(clientId, connect, address, tls, List.of());
        }

        public ProtocolVersion version() {
            return connect.version();
        }
    }

    /**
     * The answer to a CONNECT.
     *
     * @param code       SUCCESS, or the reason code of the refusing CONNACK (0x86, 0x87, 0x88, 0x89, 0x8A)
     * @param access     what the client may do (null when refused)
     * @param clientType DEVICE or APPLICATION when the credential decides it, or null to go by the client ID
     */
    record Verdict(ReasonCode code, ClientAccess access, String clientType) {

        public static Verdict allowed(ClientAccess access, String clientType) {
            return new Verdict(ReasonCode.SUCCESS, access, clientType);
        }

        public static Verdict refused(ReasonCode code) {
            return new Verdict(code, null, null);
        }

        public static final Verdict ALLOW_ALL = allowed(ClientAccess.ALLOW_ALL, null);
    }

    /** Authenticates a CONNECT; the future may complete on any thread and must not fail. */
    default CompletionStage<Verdict> authenticate(ConnectRequest request) {
        return CompletableFuture.completedFuture(Verdict.ALLOW_ALL);
    }

    /**
     * A step of an MQTT 5 enhanced authentication (4.12): what the server answers the client's
     * Authentication Data with.
     */
    sealed interface AuthStep {

        /** Another round: AUTH 0x18 with {@code data}; the client's next AUTH goes to {@code next}. */
        record Continue(byte[] data, Exchange next) implements AuthStep {
        }

        /**
         * Authenticated: CONNACK 0x00 (AUTH 0x00 after a re-authentication) carrying {@code data},
         * the client then has the verdict's access.
         */
        record Allowed(Verdict verdict, byte[] data) implements AuthStep {
        }

        /**
         * Refused: CONNACK with {@code code} (0x86, 0x87, 0x88, 0x89, 0x8A, 0x8C); a failed
         * re-authentication ends the connection with DISCONNECT 0x87 whatever the code.
         */
        record Failed(ReasonCode code) implements AuthStep {
        }
    }

    /** An enhanced authentication waiting for the client's next Authentication Data. */
    interface Exchange {
        /** The client's AUTH 0x18 with {@code data}; the future may complete on any thread and must not fail. */
        CompletionStage<AuthStep> next(byte[] data);
    }

    /**
     * Starts an enhanced authentication: for a CONNECT with an Authentication Method, or for a
     * re-authentication (AUTH 0x19 on an open connection; {@code request} is then the connection's
     * CONNECT). The default knows no method: 0x8C Bad authentication method.
     *
     * @param data the client's Authentication Data, or null if it sent none
     */
    default CompletionStage<AuthStep> startAuthentication(ConnectRequest request, String method, byte[] data) {
        return CompletableFuture.completedFuture(new AuthStep.Failed(ReasonCode.BAD_AUTHENTICATION_METHOD));
    }

    /**
     * Starts a re-authentication (AUTH 0x19 on an open connection; {@code request} is the
     * connection's CONNECT): as {@link #startAuthentication}, but a guard may let it past bounds
     * meant for storms of CONNECTs, since refusing it would end a connection that is working.
     */
    default CompletionStage<AuthStep> startReauthentication(ConnectRequest request, String method, byte[] data) {
        return startAuthentication(request, method, data);
    }
}
