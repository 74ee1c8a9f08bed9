package io.fleetmq.core.cluster;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.subscription.Subscription;
import java.util.List;
import java.util.Objects;

/**
 * A stored PUBLISH on its way to the subscribers connected to one other node, written to that node's
 * {@code downlink.<node>} topic by the node that routed it: one record per message and node, however
 * many subscribers there match.
 *
 * @param sourcePartition the {@code publish} partition the message was read from
 * @param sourceOffset    its offset there; with the partition, identifies the message cluster-wide so
 *                        a message routed twice (after a node's death) is delivered once
 * @param message         the message
 * @param matched         the matching subscriptions of that node's sessions (for a shared group, the one
 *                        chosen member's)
 */
public record Downlink(int sourcePartition, long sourceOffset, BrokerMessage message, List<Subscription> matched) {

    public Downlink {
        Objects.requireNonNull(message, "message");
        matched = List.copyOf(matched);
    }
}
