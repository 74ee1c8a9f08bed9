package io.fleetmq.kafka.publish;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.GroupConsumer;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.supervise.LoopSupervisor;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Reads the {@code publish} topic on this node and hands every message to the router (DESIGN.md,
 * "The publish path", step 4).
 *
 * <p>All nodes join one consumer group, {@code <prefix>publish}, so each partition, and with it each
 * publisher, is routed by exactly one node at a time, in partition order; see {@link GroupConsumer}
 * for commits, failures and counting. Delivery is at-least-once: a node that dies mid-batch leaves
 * its uncommitted records to the next owner, so the router must tolerate seeing a record twice.
 */
public final class PublishConsumer implements AutoCloseable {

    private final GroupConsumer<BrokerMessage> consumer;

    /** Without interest in partition ownership. */
    public PublishConsumer(KafkaClients clients, MeterRegistry registry, Consumer<PublishedRecord> handler) {
        this(clients, registry, handler, owned -> { });
    }

    public PublishConsumer(KafkaClients clients, MeterRegistry registry, Consumer<PublishedRecord> handler,
            Consumer<Set<Integer>> ownershipListener) {
        this(clients, registry, handler, ownershipListener, () -> true);
    }

    /**
     * @param handler           called on the consumer thread for each message, in partition order; it
     *                          should hand work off rather than block, since a slow handler delays
     *                          every publisher routed by this node
     * @param ownershipListener called on the consumer thread with the partitions this node owns after
     *                          each change: after assignment, and after revocation once this node's
     *                          offsets for the revoked partitions are committed
     * @param beforeCommit      called before offsets are committed; false means the handler's work for
     *                          the batch did not complete, and the batch is read again
     */
    public PublishConsumer(KafkaClients clients, MeterRegistry registry, Consumer<PublishedRecord> handler,
            Consumer<Set<Integer>> ownershipListener, BooleanSupplier beforeCommit) {
        this(clients, registry, handler, ownershipListener, beforeCommit, null);
    }

    /** @param sessionTimeout see {@link GroupConsumer.Hooks#withSessionTimeout}; null for Kafka's default */
    public PublishConsumer(KafkaClients clients, MeterRegistry registry, Consumer<PublishedRecord> handler,
            Consumer<Set<Integer>> ownershipListener, BooleanSupplier beforeCommit, java.time.Duration sessionTimeout) {
        this(clients, registry, handler, ownershipListener, beforeCommit, sessionTimeout, null, null);
    }

    /**
     * @param supervisor  see {@link GroupConsumer.Hooks#withSupervisor}; null for one of its own
     * @param deadLetters where records that do not decode go; null to skip them (counted as malformed)
     */
    public PublishConsumer(KafkaClients clients, MeterRegistry registry, Consumer<PublishedRecord> handler,
            Consumer<Set<Integer>> ownershipListener, BooleanSupplier beforeCommit, java.time.Duration sessionTimeout,
            LoopSupervisor supervisor, io.fleetmq.kafka.DeadLetters deadLetters) {
        Objects.requireNonNull(handler, "handler");
        String prefix = clients.settings().topicPrefix();
        this.consumer = new GroupConsumer<>(clients, registry, new BrokerTopics(prefix).publish(), groupId(prefix),
                "publish", MessageCodec::decode,
                (message, partition, offset) -> handler.accept(new PublishedRecord(message, partition, offset)),
                GroupConsumer.Hooks.none().withOwnership(Objects.requireNonNull(ownershipListener, "ownershipListener"))
                        .withBeforeCommit(Objects.requireNonNull(beforeCommit, "beforeCommit"))
                        .withSessionTimeout(sessionTimeout)
                        .withSupervisor(supervisor)
                        .withDeadLetters(deadLetters)
                        .withCommitInterval(COMMIT_INTERVAL));
    }

    /**
     * How often routed batches are committed at most. A record routed again (after the routing node
     * died, at most this much) reaches each subscriber once: delivery gates, DEVICE queues and
     * APPLICATION backlog readers recognise it (docs/cluster.md).
     */
    public static final java.time.Duration COMMIT_INTERVAL = java.time.Duration.ofMillis(100);

    /** The consumer group all nodes of a broker share for the {@code publish} topic. */
    public static String groupId(String topicPrefix) {
        return topicPrefix + "publish";
    }

    public void start() {
        consumer.start();
    }

    public Set<Integer> ownedPartitions() {
        return consumer.ownedPartitions();
    }

    /** Records of the partitions this node routes that it has not read yet; see {@link GroupConsumer#lag()}. */
    public long lag() {
        return consumer.lag();
    }

    /** Records of publish partition {@code partition} not read yet; 0 when this node does not route it. */
    public long lag(int partition) {
        return consumer.lag(partition);
    }

    public boolean isRunning() {
        return consumer.isRunning();
    }

    public Optional<Throwable> failure() {
        return consumer.failure();
    }

    @Override
    public void close() {
        consumer.close();
    }
}
