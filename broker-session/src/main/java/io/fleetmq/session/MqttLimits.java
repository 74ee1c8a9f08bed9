package io.fleetmq.session;

/**
 * What the broker offers and enforces per client; sent to MQTT 5 clients in CONNACK.
 *
 * @param receiveMaximum       QoS 1/2 PUBLISH a client may have unacknowledged towards us
 * @param maximumPacketSize    largest packet we accept, bytes
 * @param topicAliasMaximum    aliases a client may use towards us (0 = none)
 * @param maxKeepAliveSeconds  upper bound of a client's keep-alive; larger requests are lowered and
 *                             the value returned as Server Keep Alive (0 = no bound)
 * @param maxSessionExpirySeconds upper bound of a session's expiry interval
 * @param maxQueuedMessages    QoS 1/2 messages held for one session beyond its in-flight window
 *                             (also while it is offline); beyond that the oldest is dropped and counted
 * @param maxQueuedQos0        QoS 0 messages held while a client's socket is not writable
 * @param maxOutboundAliases   aliases the broker assigns towards a client at most (bounded by its own maximum)
 * @param maxInflightMessages  QoS 1/2 messages in flight towards one client at most, whatever
 *                             Receive Maximum it allows (65,535 when it sends none)
 * @param maxSubscriptions     subscriptions of one session at most; a SUBSCRIBE beyond gets 0x97
 *                             for the filters that would be new
 * @param bridgeSessions       client IDs given a persistent session though they ask for expiry 0
 *                             with Clean Start 0 (Mosquitto's bridge)
 */
public record MqttLimits(int receiveMaximum, int maximumPacketSize, int topicAliasMaximum, int maxKeepAliveSeconds,
                         long maxSessionExpirySeconds, int maxQueuedMessages, int maxQueuedQos0,
                         int maxOutboundAliases, int maxInflightMessages, int maxSubscriptions,
                         BridgeSessions bridgeSessions) {

    public MqttLimits {
        if (bridgeSessions == null) {
            bridgeSessions = BridgeSessions.NONE;
        }
    }

    /** Without bridge sessions. */
    public MqttLimits(int receiveMaximum, int maximumPacketSize, int topicAliasMaximum, int maxKeepAliveSeconds,
            long maxSessionExpirySeconds, int maxQueuedMessages, int maxQueuedQos0, int maxOutboundAliases,
            int maxInflightMessages, int maxSubscriptions) {
        this(receiveMaximum, maximumPacketSize, topicAliasMaximum, maxKeepAliveSeconds, maxSessionExpirySeconds,
                maxQueuedMessages, maxQueuedQos0, maxOutboundAliases, maxInflightMessages, maxSubscriptions,
                BridgeSessions.NONE);
    }

    /** The shipped defaults of the in-flight and subscription bounds, with the other limits given. */
    public MqttLimits(int receiveMaximum, int maximumPacketSize, int topicAliasMaximum, int maxKeepAliveSeconds,
            long maxSessionExpirySeconds, int maxQueuedMessages, int maxQueuedQos0, int maxOutboundAliases) {
        this(receiveMaximum, maximumPacketSize, topicAliasMaximum, maxKeepAliveSeconds, maxSessionExpirySeconds,
                maxQueuedMessages, maxQueuedQos0, maxOutboundAliases, 1_024, 1_000);
    }

    /** The session expiry the broker grants {@code connect} of {@code clientId}: what it asks, bounded. */
    public long sessionExpiry(String clientId, io.fleetmq.core.mqtt.Packet.Connect connect) {
        return Math.min(bridgeSessions.requestedExpiry(clientId, connect), maxSessionExpirySeconds);
    }

    /** These limits, with {@code bridge} giving bridges their sessions. */
    public MqttLimits withBridgeSessions(BridgeSessions bridge) {
        return new MqttLimits(receiveMaximum, maximumPacketSize, topicAliasMaximum, maxKeepAliveSeconds,
                maxSessionExpirySeconds, maxQueuedMessages, maxQueuedQos0, maxOutboundAliases, maxInflightMessages,
                maxSubscriptions, bridge);
    }

    public static MqttLimits defaults() {
        return new MqttLimits(1024, 1_048_576, 64, 1_200, 604_800, 10_000, 1_000, 64, 1_024, 1_000);
    }
}
