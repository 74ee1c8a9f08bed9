package io.fleetmq.transport.mqtt;

import io.fleetmq.core.message.UserProperty;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnAckVariableHeader;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectPayload;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttConnectVariableHeader;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttSubAckPayload;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttTopicSubscription;
import io.netty.handler.codec.mqtt.MqttUnsubAckMessage;
import io.netty.handler.codec.mqtt.MqttUnsubAckPayload;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import java.util.ArrayList;
import java.util.List;

/**
 * Translates between Netty's MQTT messages and the broker's {@link Packet}s, checking on the way
 * in what the codec does not: the rules that have a reason code of their own.
 */
final class PacketMapper {

    private PacketMapper() {
    }

    // ------------------------------------------------------------------ inbound

    static Packet.Connect connect(MqttConnectMessage m, ProtocolVersion version) {
        MqttConnectVariableHeader h = m.variableHeader();
        MqttConnectPayload p = m.payload();
        MqttProperties props = h.properties();
        Packet.Will will = null;
        if (h.isWillFlag()) {
            MqttProperties wp = p.willProperties();
            will = new Packet.Will(p.willTopic(), nonNull(p.willMessageInBytes()), h.willQos(), h.isWillRetain(),
                    intProp(wp, MqttPropertyType.WILL_DELAY_INTERVAL, 0),
                    intProp(wp, MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL, -1),
                    (int) intProp(wp, MqttPropertyType.PAYLOAD_FORMAT_INDICATOR, -1),
                    stringProp(wp, MqttPropertyType.CONTENT_TYPE),
                    stringProp(wp, MqttPropertyType.RESPONSE_TOPIC),
                    binaryProp(wp, MqttPropertyType.CORRELATION_DATA),
                    userProperties(wp));
        }
        long receiveMaximum = intProp(props, MqttPropertyType.RECEIVE_MAXIMUM, -1);
        if (receiveMaximum == 0) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "Receive Maximum of 0"); // 3.1.2.11.3: a value of 0 is a protocol error
        }
        long maximumPacketSize = intProp(props, MqttPropertyType.MAXIMUM_PACKET_SIZE, -1);
        if (maximumPacketSize == 0) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "Maximum Packet Size of 0");
        }
        String authenticationMethod = stringProp(props, MqttPropertyType.AUTHENTICATION_METHOD);
        byte[] authenticationData = binaryProp(props, MqttPropertyType.AUTHENTICATION_DATA);
        if (authenticationData != null && authenticationMethod == null) {
            // 3.1.2.11.10: Authentication Data without an Authentication Method is a protocol error.
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "Authentication Data without Authentication Method");
        }
        return new Packet.Connect(version, p.clientIdentifier() == null ? "" : p.clientIdentifier(),
                h.isCleanSession(), h.keepAliveTimeSeconds(),
                h.hasUserName() ? p.userName() : null, h.hasPassword() ? p.passwordInBytes() : null, will,
                intProp(props, MqttPropertyType.SESSION_EXPIRY_INTERVAL, 0),
                (int) receiveMaximum, maximumPacketSize,
                (int) intProp(props, MqttPropertyType.TOPIC_ALIAS_MAXIMUM, 0),
                intProp(props, MqttPropertyType.REQUEST_RESPONSE_INFORMATION, 0) == 1,
                intProp(props, MqttPropertyType.REQUEST_PROBLEM_INFORMATION, 1) == 1,
                authenticationMethod, userProperties(props), authenticationData);
    }

    /** Any packet after CONNECT. */
    static Packet inbound(MqttMessage m) {
        MqttMessageType type = m.fixedHeader().messageType();
        return switch (type) {
            case PUBLISH -> publish((MqttPublishMessage) m);
            case PUBACK -> ack(Packet.AckType.PUBACK, m);
            case PUBREC -> ack(Packet.AckType.PUBREC, m);
            case PUBREL -> ack(Packet.AckType.PUBREL, m);
            case PUBCOMP -> ack(Packet.AckType.PUBCOMP, m);
            case SUBSCRIBE -> subscribe((MqttSubscribeMessage) m);
            case UNSUBSCRIBE -> unsubscribe((MqttUnsubscribeMessage) m);
            case PINGREQ -> new Packet.PingReq();
            case DISCONNECT -> disconnect(m);
            case CONNECT -> new Packet.Connect(ProtocolVersion.V5, "", true, 0, null, null, null, 0, -1, -1, 0,
                    false, true, null, List.of()); // only its arrival matters: a second CONNECT is an error
            case AUTH -> auth(m);
            default -> throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, type + " is not sent by clients");
        };
    }

    private static Packet.Publish publish(MqttPublishMessage m) {
        MqttPublishVariableHeader h = m.variableHeader();
        int qos = m.fixedHeader().qosLevel().value();
        if (qos > 0 && h.packetId() == 0) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "QoS " + qos + " PUBLISH without packet identifier"); // [MQTT-2.2.1-3]
        }
        MqttProperties props = h.properties();
        List<Integer> subscriptionIds = new ArrayList<>(0);
        for (MqttProperties.MqttProperty<?> id : props.getProperties(MqttPropertyType.SUBSCRIPTION_IDENTIFIER.value())) {
            subscriptionIds.add((Integer) id.value());
        }
        if (!subscriptionIds.isEmpty()) {
            // [MQTT-3.3.4-6] a PUBLISH from a client must not carry a subscription identifier.
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "PUBLISH from a client with a Subscription Identifier");
        }
        long topicAlias = intProp(props, MqttPropertyType.TOPIC_ALIAS, -1);
        if (topicAlias == 0) {
            // [MQTT-3.3.2-8] a Topic Alias of 0 is not permitted: 0x94 like any alias out of range.
            throw new ProtocolViolation(ReasonCode.TOPIC_ALIAS_INVALID, "Topic Alias 0");
        }
        return new Packet.Publish(h.topicName(), (int) Math.max(topicAlias, 0),
                ByteBufUtil.getBytes(m.content()), qos, m.fixedHeader().isRetain(), m.fixedHeader().isDup(),
                qos > 0 ? h.packetId() : 0,
                intProp(props, MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL, -1),
                (int) intProp(props, MqttPropertyType.PAYLOAD_FORMAT_INDICATOR, -1),
                stringProp(props, MqttPropertyType.CONTENT_TYPE),
                stringProp(props, MqttPropertyType.RESPONSE_TOPIC),
                binaryProp(props, MqttPropertyType.CORRELATION_DATA),
                userProperties(props), List.of());
    }

    private static Packet.Ack ack(Packet.AckType type, MqttMessage m) {
        Object header = m.variableHeader();
        if (header instanceof MqttPubReplyMessageVariableHeader reply) {
            return new Packet.Ack(type, reply.messageId(), reasonCode(reply.reasonCode()), null);
        }
        return new Packet.Ack(type, ((MqttMessageIdVariableHeader) header).messageId(), ReasonCode.SUCCESS, null);
    }

    private static Packet.Subscribe subscribe(MqttSubscribeMessage m) {
        MqttMessageIdAndPropertiesVariableHeader h = m.idAndPropertiesVariableHeader();
        List<MqttTopicSubscription> topics = m.payload().topicSubscriptions();
        if (topics.isEmpty()) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "SUBSCRIBE without topic filters"); // [MQTT-3.8.3-2]
        }
        List<Packet.TopicSubscription> subs = new ArrayList<>(topics.size());
        for (MqttTopicSubscription t : topics) {
            var o = t.option();
            int retainHandling = o.retainHandling().value();
            subs.add(new Packet.TopicSubscription(t.topicFilter(), o.qos().value(), o.isNoLocal(),
                    o.isRetainAsPublished(), retainHandling));
        }
        MqttProperties props = h.properties();
        int subscriptionId = (int) intProp(props, MqttPropertyType.SUBSCRIPTION_IDENTIFIER, 0);
        return new Packet.Subscribe(h.messageId(), subscriptionId, subs, userProperties(props));
    }

    private static Packet.Unsubscribe unsubscribe(MqttUnsubscribeMessage m) {
        List<String> topics = m.payload().topics();
        if (topics.isEmpty()) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "UNSUBSCRIBE without topic filters"); // [MQTT-3.10.3-2]
        }
        return new Packet.Unsubscribe(m.idAndPropertiesVariableHeader().messageId(), topics,
                userProperties(m.idAndPropertiesVariableHeader().properties()));
    }

    /** AUTH (3.15): a Remaining Length of 0 means reason 0x00 without properties (3.15.2.1). */
    private static Packet.Auth auth(MqttMessage m) {
        if (m.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader h) {
            ReasonCode code = reasonCode(h.reasonCode());
            if (code != ReasonCode.SUCCESS && code != ReasonCode.CONTINUE_AUTHENTICATION
                    && code != ReasonCode.RE_AUTHENTICATE) {
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "AUTH with reason code " + code); // 3.15.2.1
            }
            return new Packet.Auth(code, stringProp(h.properties(), MqttPropertyType.AUTHENTICATION_METHOD),
                    binaryProp(h.properties(), MqttPropertyType.AUTHENTICATION_DATA));
        }
        return new Packet.Auth(ReasonCode.SUCCESS, null, null);
    }

    private static Packet.Disconnect disconnect(MqttMessage m) {
        if (m.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader h) {
            return new Packet.Disconnect(reasonCode(h.reasonCode()),
                    intProp(h.properties(), MqttPropertyType.SESSION_EXPIRY_INTERVAL, -1),
                    stringProp(h.properties(), MqttPropertyType.REASON_STRING), null);
        }
        return new Packet.Disconnect(ReasonCode.SUCCESS, -1, null, null);
    }

    private static ReasonCode reasonCode(byte value) {
        try {
            return ReasonCode.of(value & 0xFF);
        } catch (IllegalArgumentException e) {
            throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "unknown reason code 0x" + Integer.toHexString(value & 0xFF));
        }
    }

    // ------------------------------------------------------------------ outbound

    static MqttMessage outbound(Packet packet, boolean v5) {
        if (packet instanceof Packet.ConnAck c) {
            return connAck(c, v5);
        }
        if (packet instanceof Packet.Ack a) {
            return ack(a);
        }
        if (packet instanceof Packet.SubAck s) {
            return new MqttSubAckMessage(fixed(MqttMessageType.SUBACK),
                    new MqttMessageIdAndPropertiesVariableHeader(s.packetId(), reasonString(s.reasonString())),
                    new MqttSubAckPayload(s.reasonCodes().stream().mapToInt(c -> v5 ? c.value() : v3SubAck(c)).toArray()));
        }
        if (packet instanceof Packet.UnsubAck u) {
            return new MqttUnsubAckMessage(fixed(MqttMessageType.UNSUBACK),
                    new MqttMessageIdAndPropertiesVariableHeader(u.packetId(), reasonString(u.reasonString())),
                    v5 ? new MqttUnsubAckPayload(u.reasonCodes().stream().map(c -> (short) c.value()).toList()) : null);
        }
        if (packet instanceof Packet.PingResp) {
            return new MqttMessage(fixed(MqttMessageType.PINGRESP));
        }
        if (packet instanceof Packet.Auth a) {
            MqttProperties props = new MqttProperties();
            addString(props, MqttPropertyType.AUTHENTICATION_METHOD, a.authenticationMethod());
            if (a.authenticationData() != null) {
                props.add(new MqttProperties.BinaryProperty(MqttPropertyType.AUTHENTICATION_DATA.value(),
                        a.authenticationData()));
            }
            return new MqttMessage(fixed(MqttMessageType.AUTH),
                    new MqttReasonCodeAndPropertiesVariableHeader((byte) a.reasonCode().value(), props));
        }
        if (packet instanceof Packet.Disconnect d) {
            MqttProperties props = reasonString(d.reasonString());
            if (d.serverReference() != null) {
                props.add(new MqttProperties.StringProperty(MqttPropertyType.SERVER_REFERENCE.value(), d.serverReference()));
            }
            return new MqttMessage(fixed(MqttMessageType.DISCONNECT),
                    new MqttReasonCodeAndPropertiesVariableHeader((byte) d.reasonCode().value(), props));
        }
        // PUBLISH is encoded by PublishEncoder, which shares large payloads between connections.
        throw new IllegalArgumentException(packet.getClass().getSimpleName() + " is not mapped here");
    }

    private static MqttFixedHeader fixed(MqttMessageType type) {
        return new MqttFixedHeader(type, false, MqttQoS.AT_MOST_ONCE, false, 0);
    }

    private static MqttConnAckMessage connAck(Packet.ConnAck c, boolean v5) {
        MqttProperties props = new MqttProperties();
        if (v5) {
            addString(props, MqttPropertyType.ASSIGNED_CLIENT_IDENTIFIER, c.assignedClientId());
            addInt(props, MqttPropertyType.SESSION_EXPIRY_INTERVAL, c.sessionExpirySeconds());
            if (c.receiveMaximum() > 0 && c.receiveMaximum() < 65_535) {
                addInt(props, MqttPropertyType.RECEIVE_MAXIMUM, c.receiveMaximum());
            }
            if (c.maximumQos() >= 0 && c.maximumQos() < 2) {
                addInt(props, MqttPropertyType.MAXIMUM_QOS, c.maximumQos());
            }
            if (!c.retainAvailable()) {
                addInt(props, MqttPropertyType.RETAIN_AVAILABLE, 0);
            }
            addInt(props, MqttPropertyType.MAXIMUM_PACKET_SIZE, c.maximumPacketSize());
            if (c.topicAliasMaximum() > 0) {
                addInt(props, MqttPropertyType.TOPIC_ALIAS_MAXIMUM, c.topicAliasMaximum());
            }
            addInt(props, MqttPropertyType.SERVER_KEEP_ALIVE, c.serverKeepAliveSeconds());
            addString(props, MqttPropertyType.RESPONSE_INFORMATION, c.responseInformation());
            addString(props, MqttPropertyType.REASON_STRING, c.reasonString());
            addString(props, MqttPropertyType.AUTHENTICATION_METHOD, c.authenticationMethod());
            if (c.authenticationData() != null) {
                props.add(new MqttProperties.BinaryProperty(MqttPropertyType.AUTHENTICATION_DATA.value(),
                        c.authenticationData()));
            }
            // Wildcard, subscription identifier and shared subscriptions are available: absent means yes.
        }
        MqttConnectReturnCode code = v5 ? MqttConnectReturnCode.valueOf((byte) c.reasonCode().value()) : v3ConnAck(c.reasonCode());
        return new MqttConnAckMessage(fixed(MqttMessageType.CONNACK),
                new MqttConnAckVariableHeader(code, c.sessionPresent() && code == MqttConnectReturnCode.CONNECTION_ACCEPTED, props));
    }

    private static MqttMessage ack(Packet.Ack a) {
        MqttMessageType type = switch (a.type()) {
            case PUBACK -> MqttMessageType.PUBACK;
            case PUBREC -> MqttMessageType.PUBREC;
            case PUBREL -> MqttMessageType.PUBREL;
            case PUBCOMP -> MqttMessageType.PUBCOMP;
        };
        // [MQTT-3.6.1-1] PUBREL has the fixed header flags 0010.
        MqttQoS qos = a.type() == Packet.AckType.PUBREL ? MqttQoS.AT_LEAST_ONCE : MqttQoS.AT_MOST_ONCE;
        return new MqttMessage(new MqttFixedHeader(type, false, qos, false, 0),
                new MqttPubReplyMessageVariableHeader(a.packetId(), (byte) a.reasonCode().value(), reasonString(a.reasonString())));
    }

    /** CONNACK return codes of MQTT 3.1.1 (3.2.2.3) for the reasons the broker refuses with. */
    static MqttConnectReturnCode v3ConnAck(ReasonCode code) {
        return switch (code) {
            case SUCCESS -> MqttConnectReturnCode.CONNECTION_ACCEPTED;
            case UNSUPPORTED_PROTOCOL_VERSION -> MqttConnectReturnCode.CONNECTION_REFUSED_UNACCEPTABLE_PROTOCOL_VERSION;
            case CLIENT_IDENTIFIER_NOT_VALID -> MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED;
            case BAD_USER_NAME_OR_PASSWORD, BAD_AUTHENTICATION_METHOD -> MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USER_NAME_OR_PASSWORD;
            case NOT_AUTHORIZED, BANNED -> MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED;
            default -> MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE;
        };
    }

    /** SUBACK return codes of 3.1.1: the granted QoS, or 0x80 for any failure. */
    private static int v3SubAck(ReasonCode code) {
        return code.isError() ? 0x80 : code.value();
    }

    // ------------------------------------------------------------------ properties

    private static long intProp(MqttProperties props, MqttPropertyType type, long absent) {
        MqttProperties.MqttProperty<?> p = props.getProperty(type.value());
        return p == null ? absent : Integer.toUnsignedLong((Integer) p.value());
    }

    private static String stringProp(MqttProperties props, MqttPropertyType type) {
        MqttProperties.MqttProperty<?> p = props.getProperty(type.value());
        return p == null ? null : (String) p.value();
    }

    private static byte[] binaryProp(MqttProperties props, MqttPropertyType type) {
        MqttProperties.MqttProperty<?> p = props.getProperty(type.value());
        return p == null ? null : (byte[]) p.value();
    }

    private static List<UserProperty> userProperties(MqttProperties props) {
        List<? extends MqttProperties.MqttProperty> list = props.getProperties(MqttPropertyType.USER_PROPERTY.value());
        if (list.isEmpty()) {
            return List.of();
        }
        List<UserProperty> out = new ArrayList<>(list.size());
        for (MqttProperties.MqttProperty<?> p : list) {
            MqttProperties.StringPair pair = (MqttProperties.StringPair) p.value();
            out.add(new UserProperty(pair.key, pair.value));
        }
        return out;
    }

    private static void addInt(MqttProperties props, MqttPropertyType type, long value) {
        if (value >= 0) {
            props.add(new MqttProperties.IntegerProperty(type.value(), (int) value));
        }
    }

    private static void addString(MqttProperties props, MqttPropertyType type, String value) {
        if (value != null) {
            props.add(new MqttProperties.StringProperty(type.value(), value));
        }
    }

    private static MqttProperties reasonString(String reason) {
        MqttProperties props = new MqttProperties();
        addString(props, MqttPropertyType.REASON_STRING, reason);
        return props;
    }

    private static byte[] nonNull(byte[] b) {
        return b == null ? new byte[0] : b;
    }
}
