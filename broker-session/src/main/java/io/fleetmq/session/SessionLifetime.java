package io.fleetmq.session;

import io.fleetmq.core.actor.ActorTimers;
import io.fleetmq.core.actor.Mailbox;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import java.time.Duration;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How long the session lives after its connection and what it leaves: the session expiry interval,
 * the will, and the timers of the will delay and of the session's end [MQTT-3.1.3-9].
 */
final class SessionLifetime {

    private static final Logger log = LoggerFactory.getLogger(SessionLifetime.class);
    static final long NEVER_EXPIRES = 0xFFFF_FFFFL;

    private final String clientId;
    private final SessionServices services;
    private final Mailbox mailbox;
    private final ActorTimers timers;
    private final Runnable onWillDue;
    private final Runnable onExpired;
    private final Predicate<Packet.Will> willAllowed;
    private long expirySeconds;
    private Packet.Will will;
    /*
     * Actor timers, not raw scheduled tasks: a timer cancelled in one of the session's turns never
     * runs afterwards, even if it fired and its task already waits in the mailbox (behind the
     * reconnect that cancels it).
     */
    private ActorTimers.Timer willTimer;
    private ActorTimers.Timer expiryTimer;

    /**
     * @param onWillDue told when the will delay has passed
     * @param onExpired told when the session expiry interval has passed
     * @param willAllowed whether the client may publish its will, asked when the will would be published
     */
    SessionLifetime(String clientId, SessionServices services, Mailbox mailbox, Runnable onWillDue,
            Runnable onExpired, Predicate<Packet.Will> willAllowed) {
        this.clientId = clientId;
        this.services = services;
        this.mailbox = mailbox;
        this.timers = new ActorTimers(services.timers());
        this.onWillDue = onWillDue;
        this.onExpired = onExpired;
        this.willAllowed = willAllowed;
    }

    long expirySeconds() {
        return expirySeconds;
    }

    /** The expiry a CONNECT asks for, before the broker's bound. */
    static long requestedExpiry(Packet.Connect connect) {
        if (connect.version().isV5()) {
            return Math.max(0, connect.sessionExpirySeconds());
        }
        // 3.1.1: a clean session ends with the connection; otherwise it lasts until the client
        // comes back with clean session set (bounded by the broker's maximum).
        return connect.cleanStart() ? 0 : NEVER_EXPIRES;
    }

    /** A connection was accepted: its will and session expiry hold from now on. */
    void connected(Packet.Connect connect) {
        will = connect.will();
        expirySeconds = services.limits().sessionExpiry(clientId, connect);
    }

    /** Whether a will waits for a delay: a take-over by a resuming connection does not publish it. */
    boolean hasDelayedWill() {
        return will != null && will.delaySeconds() > 0;
    }

    /** The client's DISCONNECT set a new session expiry interval. */
    void expiryOnDisconnect(long seconds) {
        if (expirySeconds == 0 && seconds > 0) {
            // [MQTT-3.14.2-2] a session that was to end with the connection cannot be extended now.
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "session expiry set on DISCONNECT after 0 on CONNECT");
        }
        expirySeconds = Math.min(seconds, services.limits().maxSessionExpirySeconds());
    }

    /**
     * The connection ended: the will is published now, waits for its delay, or is discarded
     * ({@code publishWill} false).
     *
     * @return the will that waits, for the cluster to publish should this node go; null if none does
     */
    SessionState.PendingWill disconnected(boolean publishWill) {
        if (publishWill && will != null && !allowed(will)) {
            will = null;
        }
        if (publishWill && will != null) {
            long delay = will.delaySeconds();
            if (delay > 0 && expirySeconds > 0) {
                // The will waits for its delay, or for the end of the session if that comes first [MQTT-3.1.3-9].
                long wait = Math.min(delay, expirySeconds);
                willTimer = timers.schedule(mailbox, Duration.ofSeconds(wait), this::willDue);
            } else {
                publishWillNow();
            }
        } else {
            will = null;
        }
        return willTimer != null && will != null
                ? new SessionState.PendingWill(willMessage(will), will.delaySeconds()) : null;
    }

    /** Starts the session's expiry after its connection ended (unless it ends now or never). */
    void startExpiry() {
        if (expirySeconds != 0 && expirySeconds != NEVER_EXPIRES) {
            expiryTimer = timers.schedule(mailbox, Duration.ofSeconds(expirySeconds), this::expired);
        }
    }

    private void willDue() {
        willTimer = null;
        onWillDue.run();
    }

    private void expired() {
        expiryTimer = null;
        onExpired.run();
    }

    /** A reconnect cancels a will still waiting for its delay, and the session's expiry [MQTT-3.1.3-9]. */
    void cancelTimers() {
        if (expiryTimer != null) {
            expiryTimer.cancel();
            expiryTimer = null;
        }
        if (willTimer != null) {
            willTimer.cancel();
            willTimer = null;
        }
    }

    /** The will is not published (the session moved to another node, which publishes it if due). */
    void discardWill() {
        will = null;
    }

    /** An operator ends the session: it ends with its connection, as if it had asked for expiry 0. */
    void endsWithConnection() {
        expirySeconds = 0;
    }

    /** The session ended. */
    void ended() {
        will = null;
        expirySeconds = 0;
    }

    private BrokerMessage willMessage(Packet.Will w) {
        return willMessage(clientId, services.clock().getAsLong(), w);
    }

    /** The message a will becomes when it is published at {@code nowMillis}. */
    static BrokerMessage willMessage(String clientId, long nowMillis, Packet.Will w) {
        return new BrokerMessage(w.topic(), w.payload(), w.qos(), w.retain(), clientId, nowMillis,
                w.messageExpirySeconds(), w.payloadFormat(), w.contentType(), w.responseTopic(), w.correlationData(),
                w.userProperties());
    }

    /** The will is checked against the client's rights when it would be published; a refused one is counted. */
    private boolean allowed(Packet.Will w) {
        if (willAllowed.test(w)) {
            return true;
        }
        services.drops().count(MessageDrops.Reason.NOT_AUTHORIZED, clientId, w.topic());
        log.debug("Will of {} to {} dropped: not authorized", clientId, w.topic());
        return false;
    }

    /** Publishes the will, if there is one, now. */
    void publishWillNow() {
        Packet.Will w = will;
        will = null;
        if (willTimer != null) {
            willTimer.cancel();
            willTimer = null;
        }
        if (w == null || !allowed(w)) {
            return;
        }
        BrokerMessage message = willMessage(w);
        services.publishLog().append(message).whenComplete((ok, error) -> {
            if (error != null) {
                services.drops().count(MessageDrops.Reason.PUBLISH_NOT_STORED, clientId, w.topic());
                log.warn("Will of {} to {} not stored in Kafka: {}",
                        ClientText.of(clientId), ClientText.of(w.topic()), error.toString());
            }
        });
    }
}
