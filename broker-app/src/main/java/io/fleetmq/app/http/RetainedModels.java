package io.fleetmq.app.http;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;

/**
 * The JSON bodies of {@code /api/v1/retained}, {@code /api/v1/publish} and
 * {@code /api/v1/cluster/nodes}. Names carry their area, because the OpenAPI document names schemas
 * by simple class name.
 */
final class RetainedModels {

    private RetainedModels() {
    }

    @Schema(description = "An MQTT 5 user property: a name and a value, both UTF-8 strings")
    record MessageUserProperty(String name, String value) {
    }

    @Schema(description = "The MQTT 5 properties a retained message carries to its subscribers; absent ones are null")
    record RetainedProperties(
            @Schema(nullable = true) String contentType,
            @Schema(description = "0 unspecified bytes, 1 UTF-8 text", nullable = true) Integer payloadFormatIndicator,
            @Schema(description = "seconds left of the Message Expiry Interval, as a subscriber would get it now;"
                    + " null: it never expires", nullable = true) Long messageExpiryInterval,
            @Schema(nullable = true) String responseTopic,
            @Schema(description = "base64", nullable = true) String correlationData,
            List<MessageUserProperty> userProperties) {
    }

    @Schema(description = "A retained message")
    record RetainedMessageView(
            String topic,
            int qos,
            @Schema(description = "payload bytes") int payloadSize,
            @Schema(description = "the payload, as 'encoding' says; null in a list when it is larger than 64 KiB"
                    + " (read the topic itself for it)", nullable = true) String payload,
            @Schema(description = "utf8: the payload is the text itself; base64: the bytes, base64-encoded",
                    allowableValues = {"utf8", "base64"}) String encoding,
            @Schema(description = "whether the payload was left out of a list for its size") boolean payloadOmitted,
            RetainedProperties properties,
            @Schema(description = "client ID of the publisher ('$admin' for the admin API)") String publisherId,
            @Schema(description = "when the broker received the message that is retained", format = "date-time")
            Instant storedAt) {
    }

    @Schema(description = "One page of retained messages, by topic")
    record RetainedPage(List<RetainedMessageView> items, int total, int page, int pageSize) {
    }

    @Schema(description = "How many retained messages were deleted")
    record RetainedDeleted(int deleted) {
    }

    @Schema(description = "A message to publish as the operator, as an MQTT 5 PUBLISH would carry it")
    record PublishRequest(
            @Schema(description = "the topic name: no wildcards, not empty") String topic,
            @Schema(description = "the payload, as payloadEncoding says; empty or absent: an empty payload"
                    + " (which, retained, deletes the topic's retained message)", nullable = true) String payload,
            @Schema(description = "utf8 (default): payload is the text; base64: payload is base64-encoded bytes",
                    allowableValues = {"utf8", "base64"}, nullable = true) String payloadEncoding,
            @Schema(description = "0, 1 or 2 (default 0)", nullable = true) Integer qos,
            @Schema(description = "whether the message becomes the topic's retained message (default false)",
                    nullable = true) Boolean retain,
            @Schema(nullable = true) PublishProperties properties) {
    }

    @Schema(description = "The MQTT 5 properties of a published message; all optional")
    record PublishProperties(
            @Schema(nullable = true) String contentType,
            @Schema(description = "0 or 1; 1 requires a UTF-8 payload", nullable = true) Integer payloadFormatIndicator,
            @Schema(description = "seconds, 0 to 4294967295", nullable = true) Long messageExpiryInterval,
            @Schema(description = "a topic name, no wildcards", nullable = true) String responseTopic,
            @Schema(description = "base64", nullable = true) String correlationData,
            @Schema(nullable = true) List<MessageUserProperty> userProperties) {
    }

    @Schema(description = "A published message, stored in Kafka")
    record PublishedMessage(
            String topic,
            int qos,
            boolean retain,
            int payloadSize,
            @Schema(description = "partition of the publish topic that holds it") int partition,
            @Schema(description = "its offset in that partition") long offset) {
    }

    @Schema(description = "A node of the cluster as the answering node knows it")
    record ClusterNodeView(
            String nodeId,
            @Schema(description = "serving: takes clients; draining: sends its clients elsewhere and refuses new"
                    + " ones; fenced: (the answering node only) lost its place in the cluster and rejoins;"
                    + " left: stopped and said so; unreachable: no heartbeat within the node timeout",
                    allowableValues = {"serving", "draining", "fenced", "left", "unreachable"}) String state,
            @Schema(description = "whether it takes MQTT clients now (state serving)") boolean ready,
            @Schema(description = "the node that answered this request") boolean self,
            @Schema(description = "its current run; a restarted or rejoined node has a new one") long incarnation,
            @Schema(description = "host:port its MQTT TCP listener is bound to", nullable = true) String address,
            @Schema(description = "software version", nullable = true) String version,
            @Schema(format = "date-time", nullable = true) Instant startedAt,
            @Schema(description = "sessions with a connected client on the node, as of its latest heartbeat",
                    nullable = true) Integer connectedSessions,
            @Schema(description = "its latest heartbeat, by its clock", format = "date-time") Instant lastHeartbeat) {
    }

    @Schema(description = "The nodes of the cluster, by node ID")
    record ClusterNodesPage(List<ClusterNodeView> items, int total, int page, int pageSize) {
    }
}
