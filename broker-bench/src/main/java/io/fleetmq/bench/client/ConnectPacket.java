package io.fleetmq.bench.client;

import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttProperties;

/** The CONNECT every client of the tool sends, whether it stays connected or only measures the handshake. */
public final class ConnectPacket {

    private ConnectPacket() {
    }

    /**
     * Clean start / clean session: no state from earlier runs, none left behind [MQTT-3.1.2-4] (MQTT 5),
     * [MQTT-3.1.2-6] (3.1.1). MQTT 5 Session Expiry defaults to 0; above 0 it asks for a persistent session.
     */
    public static MqttConnectMessage build(String clientId, Protocol protocol, int keepAliveSeconds,
                                           long sessionExpiry, Credentials credentials) {
        return build(clientId, protocol, keepAliveSeconds, sessionExpiry, credentials, true);
    }

    /**
     * @param cleanStart false to resume the session a previous connection left (MQTT 5 Clean Start 0, or
     *                   3.1.1 Clean Session 0); the CONNACK's Session Present flag then says whether it did
     */
    public static MqttConnectMessage build(String clientId, Protocol protocol, int keepAliveSeconds,
                                           long sessionExpiry, Credentials credentials, boolean cleanStart) {
        var connect = MqttMessageBuilders.connect()
                .clientId(clientId)
                .protocolVersion(protocol.version())
                .cleanSession(cleanStart)
                .keepAlive(keepAliveSeconds)
                // The builder sets the User Name and Password flags from these being non-null [MQTT-3.1.2-18..21].
                .username(credentials.username())
                .password(credentials.passwordBytes());
        if (sessionExpiry > 0 && protocol == Protocol.MQTT_5) {
            MqttProperties props = new MqttProperties();
            props.add(new MqttProperties.IntegerProperty(
                    MqttProperties.MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), (int) sessionExpiry));
            connect.properties(props);
        }
        return connect.build();
    }

    /**
     * A CONNECT that starts MQTT 5 enhanced authentication [MQTT-4.12]: the Authentication Method and
     * the mechanism's first message; no user name or password, which the mechanism carries itself.
     */
    public static MqttConnectMessage enhanced(String clientId, int keepAliveSeconds, String method, byte[] data) {
        MqttProperties props = new MqttProperties();
        props.add(new MqttProperties.StringProperty(MqttProperties.AUTHENTICATION_METHOD, method));
        props.add(new MqttProperties.BinaryProperty(MqttProperties.AUTHENTICATION_DATA, data));
        return MqttMessageBuilders.connect()
                .clientId(clientId)
                .protocolVersion(Protocol.MQTT_5.version())
                .cleanSession(true)
                .keepAlive(keepAliveSeconds)
                .properties(props)
                .build();
    }
}
