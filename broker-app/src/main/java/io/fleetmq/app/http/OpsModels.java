package io.fleetmq.app.http;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The JSON bodies of {@code /api/v1/dropped}, {@code /api/v1/stats} and
 * {@code /api/v1/shared-subscriptions}, and what the node hands the API to build them from.
 */
public final class OpsModels {

    private OpsModels() {
    }

    /** One node's part, as {@link OperationsView#nodes} gives it. */
    public record NodeOps(String node, List<Sample> samples, List<Drop> drops, Map<String, Long> counts) {
    }

    @Schema(description = "A message the broker did not deliver")
    public record Drop(
            @Schema(description = "the node that dropped it") String node,
            @Schema(format = "date-time") Instant time,
            @Schema(description = "why, as the reason label of fleetmq_messages_dropped_total") String reason,
            @Schema(description = "the client it was for (or from, for a PUBLISH not stored); at most 256"
                    + " characters", nullable = true) String clientId,
            @Schema(description = "its topic; at most 256 characters", nullable = true) String topic) {
    }

    @Schema(description = "Messages dropped by reason since each node started (fleetmq_messages_dropped_total)")
    public record DropCounts(
            @Schema(description = "reason to count, all nodes together") Map<String, Long> total,
            @Schema(description = "node ID to (reason to count)") Map<String, Map<String, Long>> nodes) {
    }

    @Schema(description = "Recent dropped messages, newest first, and the counts per reason")
    public record DroppedPage(List<Drop> items,
            @Schema(description = "drops kept that match the filters") long total,
            int page, int pageSize, DropCounts counts) {
    }

    @Schema(description = "One sample interval of one node (or of all nodes, in the total series)")
    public record Sample(
            @Schema(format = "date-time", description = "end of the interval; the same instants on every node")
            Instant time,
            @Schema(description = "PUBLISH messages received from clients") long messagesIn,
            @Schema(description = "PUBLISH messages sent to clients") long messagesOut,
            @Schema(description = "payload bytes received") long bytesIn,
            @Schema(description = "payload bytes sent") long bytesOut,
            @Schema(description = "messages dropped, all reasons") long dropped,
            @Schema(description = "messages dropped by reason (reasons without drops left out)")
            Map<String, Long> drops,
            @Schema(description = "clients connected at the end of the interval") long connections,
            @Schema(description = "sessions, connected or not") long sessions,
            @Schema(description = "subscriptions of those sessions") long subscriptions) {
    }

    public record NodeSeries(String node, List<Sample> samples) {
    }

    @Schema(description = "Statistics over time: one series per node and their sum")
    public record StatsView(
            @Schema(description = "seconds per sample") double intervalSeconds,
            @Schema(description = "one series per node, oldest sample first") List<NodeSeries> nodes,
            @Schema(description = "the nodes' samples added up per instant") List<Sample> total) {
    }

    @Schema(description = "A client subscribed to a shared subscription")
    public record SharedMember(String clientId,
            @Schema(description = "the node its session is on", nullable = true) String node,
            boolean connected) {
    }

    @Schema(description = "A reader in the backlog's consumer group")
    public record GroupMember(String memberId, String clientId, String host, List<Integer> partitions) {
    }

    @Schema(description = "One partition of a backlog topic")
    public record PartitionLag(int partition,
            @Schema(description = "the offset the next message gets") long endOffset,
            @Schema(description = "the group's committed position; null: none yet", nullable = true)
            Long committedOffset,
            @Schema(description = "messages not read yet by the group") long lag) {
    }

    @Schema(description = "The Kafka backlog of an APPLICATION shared subscription")
    public record Backlog(String topic, List<PartitionLag> partitions,
            @Schema(description = "the consumer group's members: readers connected now") List<GroupMember> members,
            @Schema(description = "messages not read yet, all partitions") long lag) {
    }

    @Schema(description = "A shared subscription $share/<group>/<filter>")
    public record SharedSubscription(String group, String filter,
            @Schema(allowableValues = {"APPLICATION", "DEVICE"}, description = "APPLICATION: read from a Kafka"
                    + " backlog (a persistent APPLICATION session is a member, or the backlog waits for one);"
                    + " DEVICE: delivered to connected members") String type,
            @Schema(description = "the clients subscribed, from the cluster's subscription state")
            List<SharedMember> subscribers,
            @Schema(description = "APPLICATION only", nullable = true) Backlog backlog) {
    }

    public record SharedPage(List<SharedSubscription> items, long total, int page, int pageSize) {
    }
}
