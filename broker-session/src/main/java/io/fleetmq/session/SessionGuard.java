package io.fleetmq.session;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ReasonCode;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Who may do what: the places where a session asks before it accepts a client, a PUBLISH, a
 * SUBSCRIBE or a will, and before it reads more from a publisher. Called on the session's actor
 * thread; an answer that needs I/O (authentication) is a future, completed on any thread. The
 * default allows everything, as the broker does without security settings.
 */
public interface SessionGuard {

    /** Allows everything. */
    SessionGuard ALLOW_ALL = new SessionGuard() {
    };

    /**
     * Authentication of a CONNECT, before the connect sequence is asked: SUCCESS, or the reason code
     * of the refusing CONNACK (0x86, 0x87, 0x8C for an unsupported authentication method).
     * MQTT 5 enhanced authentication (AUTH exchanges, [MQTT-4.12]) and re-authentication go through
     * {@link #authenticate(String, Packet.Auth)}.
     */
    default CompletionStage<ReasonCode> authenticate(Packet.Connect connect) {
        return CompletableFuture.completedFuture(ReasonCode.SUCCESS);
    }

    /**
     * An AUTH packet of an authentication exchange or a re-authentication: null when the session
     * has no authentication method (AUTH is then a protocol error), else the reason code to answer.
     */
    default ReasonCode authenticate(String clientId, Packet.Auth auth) {
        return null;
    }

    /** Whether the client may publish to {@code topic}: SUCCESS, or the reason code to answer (0x87). */
    default ReasonCode authorizePublish(String clientId, String topic, int qos, boolean retain) {
        return ReasonCode.SUCCESS;
    }

    /** Whether the client may subscribe to {@code filter}: SUCCESS, or the reason code for its SUBACK entry. */
    default ReasonCode authorizeSubscribe(String clientId, String filter, int qos) {
        return ReasonCode.SUCCESS;
    }

    /** Whether the client may leave {@code will}: SUCCESS, or the reason code of the refusing CONNACK. */
    default ReasonCode authorizeWill(String clientId, Packet.Will will) {
        return ReasonCode.SUCCESS;
    }
}
