package io.fleetmq.app.http;

import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.subscription.Subscription;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;

/** The JSON bodies of {@code /api/v1/sessions} and {@code /api/v1/subscriptions}. */
final class SessionModels {

    private SessionModels() {
    }

    @Schema(description = "A session as every node knows it")
    record SessionItem(
            String clientId,
            @Schema(description = "the node holding the session: connected there, or last connected there") String node,
            boolean connected,
            @Schema(description = "the client's IP address; null for sessions started on a node of an older version",
                    nullable = true) String address,
            @Schema(description = "the user name of its CONNECT", nullable = true) String username,
            @Schema(allowableValues = {"DEVICE", "APPLICATION"}) String clientType,
            @Schema(description = "MQTT version: 5, 3.1.1 or 3.1", nullable = true) String protocol,
            @Schema(description = "when its current (or last) connection was made", format = "date-time",
                    nullable = true) Instant connectedAt,
            @Schema(description = "when its connection ended; null while connected", format = "date-time",
                    nullable = true) Instant disconnectedAt,
            @Schema(description = "whether messages wait for it in its store (a DEVICE queue in Redis, an"
                    + " APPLICATION backlog in Kafka) while it is offline") boolean persistent,
            @Schema(description = "the session expiry interval in force; 4294967295 = never") long sessionExpirySeconds) {

        static SessionItem of(SessionState s) {
            SessionState.ClientInfo c = s.client();
            return new SessionItem(s.clientId(), s.nodeId(), s.connected(), c == null ? null : c.address(),
                    c == null ? null : c.username(), s.clientType(), c == null ? null : c.protocol(),
                    c == null || c.connectedAtMillis() == 0 ? null : Instant.ofEpochMilli(c.connectedAtMillis()),
                    s.connected() ? null : Instant.ofEpochMilli(s.disconnectedAtMillis()), s.queuing(),
                    s.sessionExpirySeconds());
        }
    }

    record SessionPage(List<SessionItem> items, long total, int page, int pageSize) {
    }

    @Schema(description = "Subscription options [MQTT-3.8.3]")
    record Options(boolean noLocal, boolean retainAsPublished,
            @Schema(description = "0 send retained on subscribe, 1 only if new, 2 never") int retainHandling,
            @Schema(description = "the Subscription Identifier, null if none", nullable = true) Integer subscriptionIdentifier) {
    }

    @Schema(description = "A subscription as the cluster's subscription state holds it")
    record SubscriptionItem(
            String clientId,
            @Schema(description = "the topic filter, without $share/<group>/") String topicFilter,
            @Schema(description = "maximum QoS") int qos,
            Options options,
            @Schema(description = "the group of a shared subscription ($share/<group>/<filter>)", nullable = true)
            String sharedGroup,
            @Schema(description = "the node of the subscribing session") String node) {

        static SubscriptionItem of(Subscription s) {
            return new SubscriptionItem(s.clientId(), s.topicFilter(), s.qos(),
                    new Options(s.noLocal(), s.retainAsPublished(), s.retainHandling(),
                            s.subscriptionId() == 0 ? null : s.subscriptionId()),
                    s.shareGroup(), s.nodeId());
        }
    }

    record SubscriptionPage(List<SubscriptionItem> items, long total, int page, int pageSize) {
    }

    @Schema(description = "The session's will, not yet published; its payload is not shown")
    record WillView(String topic, int qos, boolean retain,
            @Schema(description = "the Will Delay Interval") long delaySeconds,
            @Schema(description = "size of the payload") int payloadBytes) {

        static WillView of(SessionState.PendingWill w) {
            return w == null ? null : new WillView(w.message().topic(), w.message().qos(), w.message().retain(),
                    w.delaySeconds(), w.message().payload().length);
        }
    }

    @Schema(description = "One session in detail")
    record SessionDetail(
            String clientId,
            String node,
            @Schema(description = "whether the node holding the session is alive; a gone node's sessions are"
                    + " settled by the cluster") boolean nodeAlive,
            boolean connected,
            @Schema(nullable = true) String address,
            @Schema(nullable = true) String username,
            String clientType,
            @Schema(nullable = true) String protocol,
            @Schema(format = "date-time", nullable = true) Instant connectedAt,
            @Schema(format = "date-time", nullable = true) Instant disconnectedAt,
            @Schema(description = "keep alive in force (after the server's bound); 0 = none", nullable = true)
            Integer keepAliveSeconds,
            boolean persistent,
            long sessionExpirySeconds,
            @Schema(description = "when an offline session ends; null while connected or if it never does",
                    format = "date-time", nullable = true) Instant expiresAt,
            List<SubscriptionItem> subscriptions,
            @Schema(description = "messages in the DEVICE queue (persistent DEVICE sessions); null otherwise"
                    + " or if Redis did not answer", nullable = true) Long queuedMessages,
            @Schema(description = "records of the APPLICATION backlog not yet consumed: end offset minus the"
                    + " client's committed offset (persistent APPLICATION sessions); null otherwise or if Kafka"
                    + " did not answer", nullable = true) Long backlogLag,
            @Schema(nullable = true) WillView will,
            @Schema(description = "outbound QoS 1/2 messages sent and not yet acknowledged; known only on the"
                    + " node holding the session, null elsewhere", nullable = true) Integer inFlight,
            @Schema(description = "QoS 1/2 messages waiting in the session's memory for room in the client's"
                    + " receive window; null where inFlight is", nullable = true) Integer queuedInMemory,
            @Schema(description = "set when inFlight is null because only that node knows it: ask it"
                    + " (GET this path on its admin port)", nullable = true) String inFlightKnownOn) {
    }
}
