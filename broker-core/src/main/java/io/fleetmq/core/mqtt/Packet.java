package io.fleetmq.core.mqtt;

import io.fleetmq.core.message.UserProperty;
import java.util.Arrays;
import java.util.List;

/**
 * The MQTT control packets as the broker's session layer sees them, independent of any network
 * library: the transport decodes bytes into these and encodes these into bytes. Optional numeric
 * properties use -1 for "absent"; optional strings and byte arrays use null.
 */
public sealed interface Packet {

    /** CONNECT (3.1). */
    record Connect(ProtocolVersion version, String clientId, boolean cleanStart, int keepAliveSeconds,
                   String username, byte[] password, Will will,
                   long sessionExpirySeconds, int receiveMaximum, long maximumPacketSize, int topicAliasMaximum,
                   boolean requestResponseInformation, boolean requestProblemInformation,
                   String authenticationMethod, List<UserProperty> userProperties, byte[] authenticationData)
            implements Packet {
        public Connect {
            userProperties = List.copyOf(userProperties);
        }

        /** A CONNECT without Authentication Data. */
        public Connect(ProtocolVersion version, String clientId, boolean cleanStart, int keepAliveSeconds,
                       String username, byte[] password, Will will,
                       long sessionExpirySeconds, int receiveMaximum, long maximumPacketSize, int topicAliasMaximum,
                       boolean requestResponseInformation, boolean requestProblemInformation,
                       String authenticationMethod, List<UserProperty> userProperties) {
            this(version, clientId, cleanStart, keepAliveSeconds, username, password, will, sessionExpirySeconds,
                    receiveMaximum, maximumPacketSize, topicAliasMaximum, requestResponseInformation,
                    requestProblemInformation, authenticationMethod, userProperties, null);
        }

        @Override
        public String toString() {
            return "Connect[" + version + ", clientId=" + clientId + ", cleanStart=" + cleanStart + ", keepAlive="
                    + keepAliveSeconds + ", sessionExpiry=" + sessionExpirySeconds + ", will=" + (will != null) + "]";
        }
    }

    /** The will of a CONNECT (3.1.2.5, 3.1.3.2). */
    record Will(String topic, byte[] payload, int qos, boolean retain, long delaySeconds, long messageExpirySeconds,
                int payloadFormat, String contentType, String responseTopic, byte[] correlationData,
                List<UserProperty> userProperties) {
        public Will {
            userProperties = List.copyOf(userProperties);
        }
    }

    /** CONNACK (3.2). Properties other than the reason are only sent to MQTT 5 clients. */
    record ConnAck(boolean sessionPresent, ReasonCode reasonCode, String assignedClientId,
                   long sessionExpirySeconds, int receiveMaximum, int maximumQos, boolean retainAvailable,
                   long maximumPacketSize, int topicAliasMaximum, boolean wildcardAvailable,
                   boolean subscriptionIdentifiersAvailable, boolean sharedSubscriptionsAvailable,
                   int serverKeepAliveSeconds, String responseInformation, String reasonString,
                   String authenticationMethod, byte[] authenticationData) implements Packet {

        /** A CONNACK without enhanced authentication. */
        public ConnAck(boolean sessionPresent, ReasonCode reasonCode, String assignedClientId,
                       long sessionExpirySeconds, int receiveMaximum, int maximumQos, boolean retainAvailable,
                       long maximumPacketSize, int topicAliasMaximum, boolean wildcardAvailable,
                       boolean subscriptionIdentifiersAvailable, boolean sharedSubscriptionsAvailable,
                       int serverKeepAliveSeconds, String responseInformation, String reasonString) {
            this(sessionPresent, reasonCode, assignedClientId, sessionExpirySeconds, receiveMaximum, maximumQos,
                    retainAvailable, maximumPacketSize, topicAliasMaximum, wildcardAvailable,
                    subscriptionIdentifiersAvailable, sharedSubscriptionsAvailable, serverKeepAliveSeconds,
                    responseInformation, reasonString, null, null);
        }

        /** A refusal: no session, no capabilities, only the reason. */
        public static ConnAck refuse(ReasonCode reasonCode, String reasonString) {
            return new ConnAck(false, reasonCode, null, -1, -1, -1, true, -1, -1, true, true, true, -1, null,
                    reasonString);
        }

        /** This CONNACK with the Authentication Method and Data of a finished enhanced authentication (3.2.2.3.17, 3.2.2.3.18). */
        public ConnAck withAuthentication(String method, byte[] data) {
            return new ConnAck(sessionPresent, reasonCode, assignedClientId, sessionExpirySeconds, receiveMaximum,
                    maximumQos, retainAvailable, maximumPacketSize, topicAliasMaximum, wildcardAvailable,
                    subscriptionIdentifiersAvailable, sharedSubscriptionsAvailable, serverKeepAliveSeconds,
                    responseInformation, reasonString, method, data);
        }
    }

    /** PUBLISH (3.3), in either direction. */
    record Publish(String topic, int topicAlias, byte[] payload, int qos, boolean retain, boolean dup, int packetId,
                   long messageExpirySeconds, int payloadFormat, String contentType, String responseTopic,
                   byte[] correlationData, List<UserProperty> userProperties, List<Integer> subscriptionIds)
            implements Packet {
        public Publish {
            userProperties = List.copyOf(userProperties);
            subscriptionIds = List.copyOf(subscriptionIds);
        }

        public Publish withDup(boolean newDup) {
            return new Publish(topic, topicAlias, payload, qos, retain, newDup, packetId, messageExpirySeconds,
                    payloadFormat, contentType, responseTopic, correlationData, userProperties, subscriptionIds);
        }

        @Override
        public String toString() {
            return "Publish[topic=" + topic + ", qos=" + qos + ", retain=" + retain + ", dup=" + dup + ", id=" + packetId
                    + ", " + payload.length + " bytes]";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Publish p && topic.equals(p.topic) && topicAlias == p.topicAlias
                    && Arrays.equals(payload, p.payload) && qos == p.qos && retain == p.retain && dup == p.dup
                    && packetId == p.packetId && messageExpirySeconds == p.messageExpirySeconds
                    && payloadFormat == p.payloadFormat && java.util.Objects.equals(contentType, p.contentType)
                    && java.util.Objects.equals(responseTopic, p.responseTopic)
                    && Arrays.equals(correlationData, p.correlationData) && userProperties.equals(p.userProperties)
                    && subscriptionIds.equals(p.subscriptionIds);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(topic, qos, packetId, Arrays.hashCode(payload));
        }
    }

    /** The four acknowledgements of the QoS flows (3.4 - 3.7). */
    enum AckType { PUBACK, PUBREC, PUBREL, PUBCOMP }

    /** PUBACK, PUBREC, PUBREL or PUBCOMP. */
    record Ack(AckType type, int packetId, ReasonCode reasonCode, String reasonString) implements Packet {
    }

    /** One topic filter of a SUBSCRIBE with its options (3.8.3.1). */
    record TopicSubscription(String filter, int qos, boolean noLocal, boolean retainAsPublished, int retainHandling) {
    }

    /** SUBSCRIBE (3.8). {@code subscriptionId} is 0 when absent. */
    record Subscribe(int packetId, int subscriptionId, List<TopicSubscription> subscriptions,
                     List<UserProperty> userProperties) implements Packet {
        public Subscribe {
            subscriptions = List.copyOf(subscriptions);
            userProperties = List.copyOf(userProperties);
        }
    }

    /** SUBACK (3.9): one reason code per filter, in order [MQTT-3.8.4-6]. */
    record SubAck(int packetId, List<ReasonCode> reasonCodes, String reasonString) implements Packet {
        public SubAck {
            reasonCodes = List.copyOf(reasonCodes);
        }
    }

    /** UNSUBSCRIBE (3.10). */
    record Unsubscribe(int packetId, List<String> filters, List<UserProperty> userProperties) implements Packet {
        public Unsubscribe {
            filters = List.copyOf(filters);
            userProperties = List.copyOf(userProperties);
        }
    }

    /** UNSUBACK (3.11). */
    record UnsubAck(int packetId, List<ReasonCode> reasonCodes, String reasonString) implements Packet {
        public UnsubAck {
            reasonCodes = List.copyOf(reasonCodes);
        }
    }

    /** PINGREQ (3.12). */
    record PingReq() implements Packet {
    }

    /** PINGRESP (3.13). */
    record PingResp() implements Packet {
    }

    /** DISCONNECT (3.14), in either direction. {@code sessionExpirySeconds} is -1 when absent. */
    record Disconnect(ReasonCode reasonCode, long sessionExpirySeconds, String reasonString, String serverReference)
            implements Packet {
        public static Disconnect of(ReasonCode reasonCode, String reasonString) {
            return new Disconnect(reasonCode, -1, reasonString, null);
        }
    }

    /**
     * AUTH (3.15), in either direction: a step of an enhanced authentication (0x18 Continue
     * authentication), a client's request to re-authenticate (0x19), or the server's success (0x00).
     */
    record Auth(ReasonCode reasonCode, String authenticationMethod, byte[] authenticationData) implements Packet {

        public Auth(ReasonCode reasonCode, String authenticationMethod) {
            this(reasonCode, authenticationMethod, null);
        }
    }
}
