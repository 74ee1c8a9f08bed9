package io.fleetmq.session;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.TopicNames;

/**
 * The session's current connection, null while the client is away, with what its CONNECT asked
 * for; and the writes of one mailbox turn, flushed together at its end.
 */
final class Connection {

    private ClientConnection current;
    private ProtocolVersion version = ProtocolVersion.V5;
    private boolean problemInformation = true;
    private int receiveMaximum = 65_535;
    private long maximumPacketSize;
    private int topicAliasMaximum;
    /** Written to since the last flush; flushed at the end of the turn. */
    private ClientConnection unflushed;

    /** {@code conn} is the session's connection from now on, with what {@code connect} asked for. */
    void attach(ClientConnection conn, Packet.Connect connect, MqttLimits limits) {
        current = conn;
        version = connect.version();
        problemInformation = connect.requestProblemInformation();
        // What the client allows, and never more than the node keeps in flight for one client.
        receiveMaximum = Math.min(connect.receiveMaximum() > 0 ? connect.receiveMaximum() : 65_535,
                limits.maxInflightMessages());
        maximumPacketSize = connect.maximumPacketSize() > 0 ? connect.maximumPacketSize() : 0;
        topicAliasMaximum = Math.min(Math.max(connect.topicAliasMaximum(), 0), limits.maxOutboundAliases());
    }

    /** The client is away; returns the connection it had, or null. */
    ClientConnection detach() {
        ClientConnection was = current;
        current = null;
        return was;
    }

    /** Null while the client is away. */
    ClientConnection current() {
        return current;
    }

    boolean isOnline() {
        return current != null;
    }

    boolean is(ClientConnection conn) {
        return conn == current;
    }

    boolean isWritable() {
        return current != null && current.isWritable();
    }

    ProtocolVersion version() {
        return version;
    }

    /** QoS 1/2 PUBLISH the client accepts unacknowledged (its Receive Maximum). */
    int receiveMaximum() {
        return receiveMaximum;
    }

    /** The largest packet the client accepts; 0 for no limit. */
    long maximumPacketSize() {
        return maximumPacketSize;
    }

    /** Topic aliases we may assign towards the client. */
    int topicAliasMaximum() {
        return topicAliasMaximum;
    }

    /** [MQTT-3.1.2-29] no reason strings for a client that asked for no problem information. */
    String reasonString(String reason) {
        return problemInformation ? reason : null;
    }

    /** Writes to the current connection. */
    void write(Packet packet) {
        write(current, packet);
    }

    /** Writes {@code packet} to {@code conn}; it goes out with the next {@link #flush()}, at the latest at the end of the turn. */
    void write(ClientConnection conn, Packet packet) {
        if (unflushed != conn) {
            flush(); // a connection replaced within this turn still gets what was written to it
            unflushed = conn;
        }
        conn.write(packet);
    }

    void flush() {
        if (unflushed != null) {
            unflushed.flush();
            unflushed = null;
        }
    }

    /** [MQTT-3.1.4-3] ends {@code conn} because another connection took the client ID, with 0x8E for MQTT 5. */
    void closeTakenOver(ClientConnection conn) {
        conn.sendAndClose(conn.version().isV5()
                ? Packet.Disconnect.of(ReasonCode.SESSION_TAKEN_OVER, reasonString("another connection took over this client ID"))
                : null);
    }

    /**
     * Accepts the connection that was just attached: CONNACK with what the broker offers and what it
     * changed of the client's requests, and keep-alive armed. After an enhanced authentication the
     * CONNACK carries its method and the server's final data ({@code authData}, may be null).
     */
    void connAck(Packet.Connect connect, String clientId, String assignedClientId, boolean sessionPresent, long expiry,
            MqttLimits limits, byte[] authData) {
        ClientConnection conn = current;
        long requestedExpiry = SessionLifetime.requestedExpiry(connect);
        int keepAlive = keepAlive(connect, limits);
        // [MQTT-3.2.2-21] the client must use ours, where it differs from what it asked for.
        int serverKeepAlive = keepAlive != connect.keepAliveSeconds() ? keepAlive : -1;
        Packet.ConnAck connAck = new Packet.ConnAck(sessionPresent, ReasonCode.SUCCESS, assignedClientId,
                expiry != requestedExpiry ? expiry : -1,
                limits.receiveMaximum(), -1, true, limits.maximumPacketSize(), limits.topicAliasMaximum(),
                true, true, true, serverKeepAlive,
                connect.version().isV5() && connect.requestResponseInformation() ? responseInformation(clientId) : null, null);
        if (connect.authenticationMethod() != null) {
            connAck = connAck.withAuthentication(connect.authenticationMethod(), authData);
        }
        write(conn, connAck);
        conn.keepAlive(keepAlive);
    }

    /** The keep alive in force for {@code connect}: the client's, bounded by the server's maximum. */
    static int keepAlive(Packet.Connect connect, MqttLimits limits) {
        int keepAlive = connect.keepAliveSeconds();
        if (limits.maxKeepAliveSeconds() > 0 && (keepAlive == 0 || keepAlive > limits.maxKeepAliveSeconds())) {
            return limits.maxKeepAliveSeconds();
        }
        return keepAlive;
    }

    /**
     * Response Information for a client that asked for it (never otherwise [MQTT-3.1.2-28]): the
     * topic prefix {@code response/<client ID>}, under which the client can build the Response
     * Topics of its requests. None when the client ID would not make a valid topic name (it holds
     * a wildcard character or U+0000).
     */
    private static String responseInformation(String clientId) {
        String prefix = "response/" + clientId;
        try {
            TopicNames.validateTopicName(prefix);
            return prefix;
        } catch (InvalidTopicException e) {
            return null;
        }
    }
}
