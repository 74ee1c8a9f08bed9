package io.fleetmq.core.cluster;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.subscription.Subscription;
import java.util.List;
import java.util.Objects;

/**
 * A stored PUBLISH on its way to the subscribers connected to one other node, written to that node's
 * {@code downlink.<node>} topic by the node that routed it: one record per message and node, unless
 * its matched subscriptions make it larger than a Kafka record may be; then it is split into parts
 * ({@link ClusterCodec#split}), each with some of the subscriptions.
 *
 * @param sourcePartition the {@code publish} partition the message was read from
 * @param sourceOffset    its offset there; with the partition, identifies the message cluster-wide so
 *                        a message routed twice (after a node's death) is delivered once
 * @param message         the message
 * @param matched         the matching subscriptions of that node's sessions (for a shared group, the one
 *                        chosen member's)
 * @param part            0 for an unsplit record and the first part, then 1, 2, ... in the order the
 *                        parts are written: with partition and offset, identifies what a part delivers
 */
public record Downlink(int sourcePartition, long sourceOffset, BrokerMessage message, List<Subscription> matched,
        int part) {

    public Downlink {
        Objects.requireNonNull(message, "message");
        matched = List.copyOf(matched);
        if (part < 0) {
            throw new IllegalArgumentException("part must not be negative, was " + part);
        }
    }

    /** An unsplit record. */
    public Downlink(int sourcePartition, long sourceOffset, BrokerMessage message, List<Subscription> matched) {
        this(sourcePartition, sourceOffset, message, matched, 0);
    }

    /** Where a downlink record came from, read without decoding its message. */
    public record Source(int partition, long offset, int part) {

        /** Whether this comes after {@code other} of the same partition: a higher offset, or a later part. */
        public boolean after(long otherOffset, int otherPart) {
            return offset > otherOffset || offset == otherOffset && part > otherPart;
        }
    }
}
