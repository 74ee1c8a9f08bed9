package io.fleetmq.session;

import io.fleetmq.core.mqtt.Packet;
import java.util.regex.Pattern;

/**
 * A persistent session for bridges that ask for one the wrong way. Mosquitto's MQTT 5 bridge with
 * {@code cleansession false} connects with Clean Start 0 but Session Expiry 0, so its session would
 * end with each connection and the QoS 1 messages routed to it while it reconnects would be lost.
 * A CONNECT whose client ID matches {@code clientIds} (the whole ID) and that asks exactly that
 * gets {@code expirySeconds} instead; the CONNACK's Session Expiry Interval tells the client, as
 * MQTT 5 lets the server do [MQTT-3.2.2-17]. Every other CONNECT keeps what it asked for.
 *
 * @param clientIds     the client IDs of such bridges; null for none
 * @param expirySeconds the session expiry they get (still bounded by the broker's maximum)
 */
public record BridgeSessions(Pattern clientIds, long expirySeconds) {

    /** No client ID gets a session it did not ask for. */
    public static final BridgeSessions NONE = new BridgeSessions(null, 0);

    /** @param clientIdPattern a regular expression; null or empty for none */
    public static BridgeSessions of(String clientIdPattern, long expirySeconds) {
        return clientIdPattern == null || clientIdPattern.isEmpty() ? NONE
                : new BridgeSessions(Pattern.compile(clientIdPattern), expirySeconds);
    }

    /**
     * The session expiry the broker takes {@code connect} of {@code clientId} to ask for, before
     * the broker's bound.
     */
    public long requestedExpiry(String clientId, Packet.Connect connect) {
        long requested = SessionLifetime.requestedExpiry(connect);
        if (requested == 0 && !connect.cleanStart() && connect.version().isV5() && clientIds != null
                && clientId != null && clientIds.matcher(clientId).matches()) {
            return expirySeconds;
        }
        return requested;
    }
}
