package io.fleetmq.transport.mqtt;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.transport.limits.ConnectionLimits;
import io.fleetmq.transport.limits.NodeLimits;
import java.nio.charset.StandardCharsets;

/**
 * Lengths and depths of topics against the node's limits: a topic name beyond them is answered
 * 0x90 (Topic Name invalid), a topic filter 0x8F (Topic Filter invalid); each time is counted.
 */
final class TopicLimits {

    private TopicLimits() {
    }

    /** Checks the topics of a packet from a connected client; throws the violation that ends the connection. */
    static void check(NodeLimits limits, Packet packet) {
        if (packet instanceof Packet.Publish p) {
            if (!p.topic().isEmpty()) { // empty: the topic travels as an alias
                check(limits, p.topic(), ReasonCode.TOPIC_NAME_INVALID);
            }
        } else if (packet instanceof Packet.Subscribe s) {
            for (Packet.TopicSubscription t : s.subscriptions()) {
                check(limits, t.filter(), ReasonCode.TOPIC_FILTER_INVALID);
            }
        } else if (packet instanceof Packet.Unsubscribe u) {
            for (String filter : u.filters()) {
                check(limits, filter, ReasonCode.TOPIC_FILTER_INVALID);
            }
        }
    }

    /** Throws {@code code} if {@code topic} is longer or deeper than the node allows. */
    static void check(NodeLimits limits, String topic, ReasonCode code) {
        ConnectionLimits l = limits.limits();
        // UTF-8 takes at least one byte per UTF-16 unit and at most three: encode only when in doubt.
        if (topic.length() > l.maxTopicLength() || topic.length() * 3L > l.maxTopicLength()
                && topic.getBytes(StandardCharsets.UTF_8).length > l.maxTopicLength()) {
            limits.exceeded(NodeLimits.TOPIC_LENGTH);
            throw new ProtocolViolation(code, "topic longer than " + l.maxTopicLength() + " bytes");
        }
        int levels = 1;
        for (int i = 0; i < topic.length(); i++) {
            if (topic.charAt(i) == '/' && ++levels > l.maxTopicLevels()) {
                limits.exceeded(NodeLimits.TOPIC_LEVELS);
                throw new ProtocolViolation(code, "topic of more than " + l.maxTopicLevels() + " levels");
            }
        }
    }

    /** Whether a client identifier fits the node's limit (in UTF-8 bytes); counts it if not. */
    static boolean clientIdFits(NodeLimits limits, String clientId) {
        int max = limits.limits().maxClientIdLength();
        if (clientId.length() <= max / 3 || clientId.getBytes(StandardCharsets.UTF_8).length <= max) {
            return true;
        }
        limits.exceeded(NodeLimits.CLIENT_ID_LENGTH);
        return false;
    }
}
