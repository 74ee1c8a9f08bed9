package io.fleetmq.core.message;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The broker's internal form of an MQTT PUBLISH: what travels through Kafka from the node a
 * publisher is connected to, to the nodes of its subscribers, and what the retained store keeps.
 *
 * <p>It carries every MQTT 5 property that must reach subscribers unaltered [MQTT-3.3.2-*]: the
 * message expiry interval (as the original interval plus the time the broker received the message,
 * so any node can compute what is left of it), payload format indicator, content type, response
 * topic, correlation data and the user properties in their original order [MQTT-3.3.2-17,
 * MQTT-3.3.2-18]. Properties that only concern one hop (topic alias, subscription identifiers) are
 * not part of it.
 *
 * <p>The byte arrays are handed over, not copied: a payload can be large and passes through
 * several stages, so neither the creator nor any reader may modify {@code payload} or
 * {@code correlationData} after construction. {@link #equals} and {@link #hashCode} compare them by
 * content, which a record would not do by itself.
 *
 * @param topic                 the topic name the message was published to, never a filter
 * @param payload               the application message; empty is allowed (and deletes a retained
 *                              message when retain is set [MQTT-3.3.1-6])
 * @param qos                   0, 1 or 2 as published
 * @param retain                the RETAIN flag as published
 * @param publisherId           client ID of the publisher; the Kafka key of the {@code publish}
 *                              topic, which keeps one publisher's messages in order
 * @param createdAtMillis       epoch millis when the broker received the message; the start of its
 *                              expiry interval
 * @param expiryIntervalSeconds the Message Expiry Interval as received, or {@link #NO_EXPIRY}
 * @param payloadFormat         the Payload Format Indicator (0 or 1), or {@link #PAYLOAD_FORMAT_ABSENT}
 * @param contentType           Content Type, or {@code null} if absent
 * @param responseTopic         Response Topic, or {@code null} if absent
 * @param correlationData       Correlation Data, or {@code null} if absent
 * @param userProperties        User Properties in the order received; empty if none
 */
public record BrokerMessage(
        String topic,
        byte[] payload,
        int qos,
        boolean retain,
        String publisherId,
        long createdAtMillis,
        long expiryIntervalSeconds,
        int payloadFormat,
        String contentType,
        String responseTopic,
        byte[] correlationData,
        List<UserProperty> userProperties) {

    /** {@link #expiryIntervalSeconds()} when the publisher sent no Message Expiry Interval. */
    public static final long NO_EXPIRY = -1;
    /** The largest Message Expiry Interval MQTT can carry: a Four Byte Integer. */
    public static final long MAX_EXPIRY_INTERVAL_SECONDS = 0xFFFF_FFFFL;
    /** {@link #payloadFormat()} when the publisher sent no Payload Format Indicator. */
    public static final int PAYLOAD_FORMAT_ABSENT = -1;
    /** Payload Format Indicator 0: unspecified bytes. */
    public static final int PAYLOAD_FORMAT_BYTES = 0;
    /** Payload Format Indicator 1: UTF-8 encoded character data. */
    public static final int PAYLOAD_FORMAT_UTF8 = 1;

    public BrokerMessage {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(publisherId, "publisherId");
        Objects.requireNonNull(userProperties, "userProperties");
        if (topic.isEmpty()) {
            // [MQTT-4.7.3-1] a topic name has at least one character; an alias is resolved before this.
            throw new IllegalArgumentException("topic must not be empty");
        }
        if (qos < 0 || qos > 2) {
            throw new IllegalArgumentException("qos must be 0, 1 or 2, not " + qos);
        }
        if (createdAtMillis < 0) {
            throw new IllegalArgumentException("createdAtMillis must not be negative, not " + createdAtMillis);
        }
        if (expiryIntervalSeconds != NO_EXPIRY
                && (expiryIntervalSeconds < 0 || expiryIntervalSeconds > MAX_EXPIRY_INTERVAL_SECONDS)) {
            throw new IllegalArgumentException("expiryIntervalSeconds must be -1 (none) or 0.."
                    + MAX_EXPIRY_INTERVAL_SECONDS + ", not " + expiryIntervalSeconds);
        }
        if (payloadFormat != PAYLOAD_FORMAT_ABSENT && payloadFormat != PAYLOAD_FORMAT_BYTES
                && payloadFormat != PAYLOAD_FORMAT_UTF8) {
            throw new IllegalArgumentException("payloadFormat must be -1 (absent), 0 or 1, not " + payloadFormat);
        }
        // Immutable, and rejects null elements.
        userProperties = List.copyOf(userProperties);
    }

    /** A message without any MQTT 5 properties, as an MQTT 3.1.1 publisher sends it. */
    public static BrokerMessage of(String topic, byte[] payload, int qos, boolean retain, String publisherId,
            long createdAtMillis) {
        return new BrokerMessage(topic, payload, qos, retain, publisherId, createdAtMillis, NO_EXPIRY,
                PAYLOAD_FORMAT_ABSENT, null, null, null, List.of());
    }

    /**
     * The Message Expiry Interval to forward at {@code nowMillis}: the received value minus the time
     * the message has waited in the broker [MQTT-3.3.2-6].
     *
     * @return {@link #NO_EXPIRY} if the message never expires; otherwise the whole seconds left,
     *         where 0 or less means it has expired and must not be delivered [MQTT-3.3.2-5]
     */
    public long remainingExpirySeconds(long nowMillis) {
        if (expiryIntervalSeconds == NO_EXPIRY) {
            return NO_EXPIRY;
        }
        // Clocks of different nodes disagree a little; a message never gains lifetime from that.
        long waitedMillis = Math.max(0, nowMillis - createdAtMillis);
        return expiryIntervalSeconds - waitedMillis / 1000;
    }

    /** Whether the expiry interval has passed at {@code nowMillis}; never for a message without one. */
    public boolean isExpired(long nowMillis) {
        return expiryIntervalSeconds != NO_EXPIRY && remainingExpirySeconds(nowMillis) <= 0;
    }

    /** Whether the publisher sent any MQTT 5 property that travels with the message. */
    public boolean hasProperties() {
        return expiryIntervalSeconds != NO_EXPIRY || payloadFormat != PAYLOAD_FORMAT_ABSENT || contentType != null
                || responseTopic != null || correlationData != null || !userProperties.isEmpty();
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        return other instanceof BrokerMessage m
                && qos == m.qos
                && retain == m.retain
                && createdAtMillis == m.createdAtMillis
                && expiryIntervalSeconds == m.expiryIntervalSeconds
                && payloadFormat == m.payloadFormat
                && topic.equals(m.topic)
                && publisherId.equals(m.publisherId)
                && Arrays.equals(payload, m.payload)
                && Objects.equals(contentType, m.contentType)
                && Objects.equals(responseTopic, m.responseTopic)
                && Arrays.equals(correlationData, m.correlationData)
                && userProperties.equals(m.userProperties);
    }

    @Override
    public int hashCode() {
        int h = Objects.hash(topic, qos, retain, publisherId, createdAtMillis, expiryIntervalSeconds, payloadFormat,
                contentType, responseTopic, userProperties);
        h = 31 * h + Arrays.hashCode(payload);
        return 31 * h + Arrays.hashCode(correlationData);
    }

    /**
     * Names the message without its content: payloads can be large and private, and this string
     * ends up in logs. Absent properties are left out.
     */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(128).append("BrokerMessage[topic=").append(topic)
                .append(", qos=").append(qos)
                .append(", retain=").append(retain)
                .append(", publisherId=").append(publisherId)
                .append(", createdAtMillis=").append(createdAtMillis)
                .append(", payload=").append(payload.length).append(" bytes");
        if (expiryIntervalSeconds != NO_EXPIRY) {
            s.append(", expiryIntervalSeconds=").append(expiryIntervalSeconds);
        }
        if (payloadFormat != PAYLOAD_FORMAT_ABSENT) {
            s.append(", payloadFormat=").append(payloadFormat);
        }
        if (contentType != null) {
            s.append(", contentType=").append(contentType);
        }
        if (responseTopic != null) {
            s.append(", responseTopic=").append(responseTopic);
        }
        if (correlationData != null) {
            s.append(", correlationData=").append(correlationData.length).append(" bytes");
        }
        if (!userProperties.isEmpty()) {
            s.append(", userProperties=").append(userProperties.size());
        }
        return s.append(']').toString();
    }
}
