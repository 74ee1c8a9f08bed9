package io.fleetmq.app.http;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.UserProperty;
import io.fleetmq.core.retained.LogPosition;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.TopicNames;
import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code POST /api/v1/publish}: a message sent as the operator. It is checked as an MQTT 5 PUBLISH
 * is (topic name, properties, the node's limits on topics, user properties and packet size) and
 * then takes a client's path: appended to the publish log, and answered once Kafka stored it; from
 * there it reaches the subscribers on every node and, if retained, becomes the topic's retained
 * message everywhere. No authorization rule applies: the bearer token is the operator's.
 */
final class PublishRoutes {

    static final String PATH = AdminApi.PREFIX + "/publish";
    /**
     * The publisher's client ID of what the admin API publishes: the Kafka key that keeps its
     * messages in order, and what a No Local subscription compares with.
     */
    static final String PUBLISHER_ID = "$admin";
    /** Longest wait for Kafka: below the request timeouts of common HTTP clients. */
    private static final long STORE_TIMEOUT_SECONDS = 25;
    /** The largest MQTT string or binary field: a two-byte length. */
    private static final int MAX_FIELD_BYTES = 65_535;

    private final AdminApi api;

    PublishRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.post(PATH).id("publish").tag("retained")
                .summary("Publish a message as the operator: stored in Kafka before the answer, delivered to the"
                        + " subscribers on every node, retained if asked")
                .body(RetainedModels.PublishRequest.class)
                .reply(200, "stored in Kafka at the partition and offset given", RetainedModels.PublishedMessage.class)
                .reply(409, "retain: the cluster holds its maximum of retained messages or bytes",
                        ApiModels.ErrorBody.class)
                .handle(RetainedRoutes.serving(this::publish));
    }

    private void publish(Context ctx) {
        RetainedModels.PublishRequest r = ApiJson.read(ctx, RetainedModels.PublishRequest.class);
        RetainedMessages messages = api.retainedMessages();
        if (messages == null) {
            throw ApiException.unavailable("the node is starting; try again shortly");
        }
        RetainedMessages.Limits limits = messages.limits();
        String topic = topic(r.topic(), limits);
        byte[] payload = payload(r.payload(), r.payloadEncoding());
        int qos = r.qos() == null ? 0 : r.qos();
        if (qos < 0 || qos > 2) {
            throw ApiException.badRequest("qos", "must be 0, 1 or 2");
        }
        boolean retain = Boolean.TRUE.equals(r.retain());
        RetainedModels.PublishProperties p = r.properties() != null ? r.properties()
                : new RetainedModels.PublishProperties(null, null, null, null, null, null);
        Integer format = p.payloadFormatIndicator();
        if (format != null && format != 0 && format != 1) {
            throw ApiException.badRequest("properties.payloadFormatIndicator", "must be 0 or 1");
        }
        if (format != null && format == 1 && MessageViews.utf8(payload) == null) {
            throw ApiException.badRequest("payload", "is not valid UTF-8, as properties.payloadFormatIndicator 1 says");
        }
        Long expiry = p.messageExpiryInterval();
        if (expiry != null && (expiry < 0 || expiry > BrokerMessage.MAX_EXPIRY_INTERVAL_SECONDS)) {
            throw ApiException.badRequest("properties.messageExpiryInterval",
                    "must be between 0 and " + BrokerMessage.MAX_EXPIRY_INTERVAL_SECONDS + " seconds");
        }
        String contentType = string("properties.contentType", p.contentType());
        String responseTopic = string("properties.responseTopic", p.responseTopic());
        if (responseTopic != null) {
            if (responseTopic.isEmpty()) {
                throw ApiException.badRequest("properties.responseTopic", "must not be empty");
            }
            try {
                TopicNames.validateTopicName(responseTopic); // [MQTT-3.3.2-14]
            } catch (InvalidTopicException e) {
                throw ApiException.badRequest("properties.responseTopic", e.getMessage());
            }
        }
        byte[] correlation = p.correlationData() == null ? null
                : base64("properties.correlationData", p.correlationData());
        if (correlation != null && correlation.length > MAX_FIELD_BYTES) {
            throw ApiException.badRequest("properties.correlationData", "is longer than " + MAX_FIELD_BYTES + " bytes");
        }
        List<UserProperty> users = userProperties(p.userProperties(), limits);
        BrokerMessage message = new BrokerMessage(topic, payload, qos, retain, PUBLISHER_ID, messages.now(),
                expiry == null ? BrokerMessage.NO_EXPIRY : expiry,
                format == null ? BrokerMessage.PAYLOAD_FORMAT_ABSENT : format, contentType, responseTopic, correlation,
                users);
        long size = packetSize(message);
        if (size > limits.maxPacketSize()) {
            throw ApiException.badRequest("payload", "the PUBLISH would be " + size + " bytes, more than the"
                    + " broker's maximum packet size of " + limits.maxPacketSize() + " (mqtt.max-packet-size)");
        }
        if (retain && payload.length > 0) {
            String refusal = messages.retainedRefusal(message);
            if (refusal != null) {
                throw ApiException.conflict("retain: " + refusal);
            }
        }
        LogPosition at = await(messages.publish(message));
        ApiJson.write(ctx, 200, new RetainedModels.PublishedMessage(topic, qos, retain, payload.length,
                at == null ? -1 : at.partition(), at == null ? -1 : at.offset()));
    }

    private static String topic(String topic, RetainedMessages.Limits limits) {
        if (topic == null) {
            throw ApiException.badRequest("topic", "is required");
        }
        if (topic.isEmpty()) {
            throw ApiException.badRequest("topic", "must not be empty"); // [MQTT-4.7.3-1]
        }
        string("topic", topic);
        try {
            TopicNames.validateTopicName(topic);
        } catch (InvalidTopicException e) {
            throw ApiException.badRequest("topic", e.getMessage());
        }
        if (topic.getBytes(StandardCharsets.UTF_8).length > limits.maxTopicLength()) {
            throw ApiException.badRequest("topic", "is longer than the broker's " + limits.maxTopicLength() + " bytes");
        }
        if (TopicNames.levels(topic).length > limits.maxTopicLevels()) {
            throw ApiException.badRequest("topic", "has more than the broker's " + limits.maxTopicLevels() + " levels");
        }
        return topic;
    }

    private static byte[] payload(String payload, String encoding) {
        if (encoding != null && !encoding.equals(MessageViews.UTF8) && !encoding.equals(MessageViews.BASE64)) {
            throw ApiException.badRequest("payloadEncoding", "must be utf8 or base64");
        }
        if (payload == null) {
            return new byte[0];
        }
        if (MessageViews.BASE64.equals(encoding)) {
            return base64("payload", payload);
        }
        if (!wellFormed(payload)) {
            throw ApiException.badRequest("payload", "is not valid Unicode text");
        }
        return payload.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] base64(String field, String value) {
        try {
            return Base64.getDecoder().decode(value);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(field, "is not valid base64");
        }
    }

    /** An MQTT UTF-8 string field: well-formed, no U+0000 [MQTT-1.5.4-2], at most 65,535 bytes. */
    private static String string(String field, String value) {
        if (value == null) {
            return null;
        }
        if (!wellFormed(value) || value.indexOf('\u0000') >= 0) {
            throw ApiException.badRequest(field, "is not a valid MQTT string (unpaired surrogate or U+0000)");
        }
        if (value.getBytes(StandardCharsets.UTF_8).length > MAX_FIELD_BYTES) {
            throw ApiException.badRequest(field, "is longer than " + MAX_FIELD_BYTES + " bytes");
        }
        return value;
    }

    private static List<UserProperty> userProperties(List<RetainedModels.MessageUserProperty> given,
            RetainedMessages.Limits limits) {
        if (given == null) {
            return List.of();
        }
        if (given.size() > limits.maxUserProperties()) {
            throw ApiException.badRequest("properties.userProperties", "more than the broker's "
                    + limits.maxUserProperties() + " user properties");
        }
        List<UserProperty> users = new ArrayList<>(given.size());
        long bytes = 0;
        for (int i = 0; i < given.size(); i++) {
            String field = "properties.userProperties[" + i + "]";
            RetainedModels.MessageUserProperty u = given.get(i);
            if (u == null) {
                throw ApiException.badRequest(field, "must be an object with name and value");
            }
            if (u.name() == null) {
                throw ApiException.badRequest(field + ".name", "is required");
            }
            if (u.value() == null) {
                throw ApiException.badRequest(field + ".value", "is required");
            }
            string(field + ".name", u.name());
            string(field + ".value", u.value());
            bytes += u.name().getBytes(StandardCharsets.UTF_8).length + u.value().getBytes(StandardCharsets.UTF_8).length;
            users.add(new UserProperty(u.name(), u.value()));
        }
        if (bytes > limits.maxUserPropertyBytes()) {
            throw ApiException.badRequest("properties.userProperties", "more than the broker's "
                    + limits.maxUserPropertyBytes() + " bytes of names and values");
        }
        return users;
    }

    private static boolean wellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /** Bytes of the MQTT 5 PUBLISH packet that carries {@code m} (QoS 1/2 with a packet identifier). */
    static long packetSize(BrokerMessage m) {
        long props = 0;
        if (m.expiryIntervalSeconds() != BrokerMessage.NO_EXPIRY) {
            props += 1 + 4;
        }
        if (m.payloadFormat() != BrokerMessage.PAYLOAD_FORMAT_ABSENT) {
            props += 1 + 1;
        }
        if (m.contentType() != null) {
            props += 1 + utf8(m.contentType());
        }
        if (m.responseTopic() != null) {
            props += 1 + utf8(m.responseTopic());
        }
        if (m.correlationData() != null) {
            props += 1 + 2 + m.correlationData().length;
        }
        for (UserProperty u : m.userProperties()) {
            props += 1 + utf8(u.name()) + utf8(u.value());
        }
        long remaining = utf8(m.topic()) + (m.qos() > 0 ? 2 : 0) + varIntSize(props) + props + m.payload().length;
        return 1 + varIntSize(remaining) + remaining;
    }

    private static long utf8(String s) {
        return 2 + s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static int varIntSize(long value) {
        return value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4;
    }

    /** Waits for Kafka to store what was appended; 503 if it did not. */
    static <T> T await(CompletableFuture<T> stored) {
        try {
            return stored.get(STORE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw ApiException.unavailable("not stored in Kafka (" + cause.getClass().getSimpleName()
                    + "); try again");
        } catch (TimeoutException e) {
            throw ApiException.unavailable("Kafka did not confirm within " + STORE_TIMEOUT_SECONDS
                    + " s; the change may still be applied");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted while waiting for Kafka");
        }
    }
}
