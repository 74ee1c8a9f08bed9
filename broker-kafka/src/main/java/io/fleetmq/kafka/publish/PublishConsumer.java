package io.fleetmq.kafka.publish;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the {@code publish} topic on this node and hands every message to the router (DESIGN.md,
 * "The publish path", step 4).
 *
 * <p>All nodes join one consumer group, {@code <prefix>publish}, so each partition, and with it each
 * publisher, is routed by exactly one node at a time. One thread per node polls and calls the
 * handler for each record, in partition order.
 *
 * <p>Delivery is at-least-once: offsets are committed only after the handler has returned for every
 * record of a poll (asynchronously while running, synchronously when partitions are revoked and on
 * close), so a node that dies mid-batch leaves its uncommitted records to the next owner. Handlers
 * must tolerate seeing a record twice after a rebalance.
 *
 * <p>Nothing in one record stops the loop: a record that does not decode and a handler that throws
 * are each logged and counted in {@code fleetmq.messages.dropped} (reasons {@code malformed_record},
 * {@code handler_failed}), and consumption goes on. Anything else (a Kafka error the client cannot
 * recover from, an exception from the ownership listener) stops the loop and leaves the group, so
 * the partitions move to a healthy node; {@link #isRunning()} and {@link #failure()} then tell the
 * node's health check.
 */
public final class PublishConsumer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PublishConsumer.class);

    static final String DROPPED_METER = "fleetmq.messages.dropped";
    static final String COMMIT_ERRORS_METER = "fleetmq.kafka.commit.errors";

    /** How long one poll waits for records; {@link #close()} interrupts it at once with a wakeup. */
    private static final Duration POLL_TIMEOUT = Duration.ofSeconds(1);

    private final KafkaClients clients;
    private final String topic;
    private final String groupId;
    private final Consumer<PublishedRecord> handler;
    private final Consumer<Set<Integer>> ownershipListener;
    private final Duration requestTimeout;
    private final Counter malformed;
    private final Counter handlerFailed;
    private final Counter commitErrors;

    private boolean closed;
    private volatile boolean stopping;
    private volatile boolean running;
    private volatile Throwable failure;
    private volatile Set<Integer> owned = Set.of();
    /** Set once by {@link #start()}; the thread start publishes it to the consumer thread. */
    private KafkaConsumer<String, byte[]> consumer;
    private Thread thread;

    /** Offsets (next to read) of records handled but not yet committed synchronously; consumer thread only. */
    private final Map<TopicPartition, OffsetAndMetadata> handled = new HashMap<>();

    /** Without interest in partition ownership. */
    public PublishConsumer(KafkaClients clients, MeterRegistry registry, Consumer<PublishedRecord> handler) {
        this(clients, registry, handler, owned -> { });
    }

    /**
     * @param handler           called on the consumer thread for each message, in partition order; it
     *                          should hand work off rather than block, since a slow handler delays
     *                          every publisher routed by this node
     * @param ownershipListener called on the consumer thread with the partitions this node owns after
     *                          each change: after assignment, and after revocation once this node's
     *                          offsets for the revoked partitions are committed, before another node
     *                          starts on them
     */
    public PublishConsumer(KafkaClients clients, MeterRegistry registry, Consumer<PublishedRecord> handler,
            Consumer<Set<Integer>> ownershipListener) {
        this.clients = Objects.requireNonNull(clients, "clients");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.ownershipListener = Objects.requireNonNull(ownershipListener, "ownershipListener");
        String prefix = clients.settings().topicPrefix();
        this.topic = new BrokerTopics(prefix).publish();
        this.groupId = groupId(prefix);
        this.requestTimeout = clients.settings().requestTimeout();
        this.malformed = registry.counter(DROPPED_METER, "reason", "malformed_record");
        this.handlerFailed = registry.counter(DROPPED_METER, "reason", "handler_failed");
        this.commitErrors = registry.counter(COMMIT_ERRORS_METER, "topic", "publish");
    }

    /** The consumer group all nodes of a broker share for the {@code publish} topic. */
    public static String groupId(String topicPrefix) {
        return topicPrefix + "publish";
    }

    /** Joins the group and starts consuming on a thread of its own. At most once per instance. */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("publish consumer is closed");
        }
        if (thread != null) {
            throw new IllegalStateException("publish consumer already started");
        }
        // Cooperative rebalancing: a node joining or leaving moves only the partitions that change
        // owner, instead of pausing routing on every node while all partitions are reassigned.
        consumer = clients.consumer("publish", groupId, Map.of(
                ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName()));
        running = true;
        thread = new Thread(this::run, "fleetmq-publish-consumer");
        // Daemon so a forgotten close() cannot keep the JVM alive; orderly shutdown closes it explicitly.
        thread.setDaemon(true);
        thread.start();
    }

    /** The partitions of {@code publish} this node routes right now. */
    public Set<Integer> ownedPartitions() {
        return owned;
    }

    /** Between {@link #start()} and the end of the consumer loop, by {@link #close()} or by a failure. */
    public boolean isRunning() {
        return running;
    }

    /** What stopped the consumer loop, if it stopped by itself. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    private void run() {
        try {
            consumer.subscribe(List.of(topic), new Rebalance());
            while (!stopping) {
                ConsumerRecords<String, byte[]> records = consumer.poll(POLL_TIMEOUT);
                if (records.isEmpty()) {
                    continue;
                }
                Map<TopicPartition, OffsetAndMetadata> batch = new HashMap<>();
                for (TopicPartition partition : records.partitions()) {
                    long next = -1;
                    for (ConsumerRecord<String, byte[]> record : records.records(partition)) {
                        deliver(record);
                        next = record.offset() + 1;
                    }
                    batch.put(partition, new OffsetAndMetadata(next));
                }
                handled.putAll(batch);
                consumer.commitAsync(batch, (offsets, exception) -> {
                    if (exception != null) {
                        // Not fatal: the next commit covers these offsets, at worst records are redelivered.
                        commitErrors.increment();
                        log.warn("Committing offsets of {} failed: {}", topic, exception.toString());
                    }
                });
            }
        } catch (WakeupException e) {
            if (!stopping) {
                failure = e;
                log.error("Publish consumer woken up unexpectedly; it stops and leaves group {}", groupId, e);
            }
        } catch (RuntimeException | Error e) {
            failure = e;
            log.error("Publish consumer failed; it stops and leaves group {} so other nodes take over its partitions",
                    groupId, e);
        } finally {
            shutDown();
        }
    }

    private void deliver(ConsumerRecord<String, byte[]> record) {
        BrokerMessage message;
        try {
            if (record.value() == null) {
                throw new MessageFormatException("record has no value");
            }
            message = MessageCodec.decode(record.value());
        } catch (MessageFormatException e) {
            malformed.increment();
            log.warn("Skipping malformed record in {} partition {} offset {}: {}", topic, record.partition(),
                    record.offset(), e.getMessage());
            return;
        }
        try {
            handler.accept(new PublishedRecord(message, record.partition(), record.offset()));
        } catch (RuntimeException e) {
            handlerFailed.increment();
            log.error("Handler failed on {} from partition {} offset {}; the message is not routed", message,
                    record.partition(), record.offset(), e);
        }
    }

    private void shutDown() {
        try {
            // Whatever stopped the loop, the records in here were handled.
            commit(new HashMap<>(handled));
        } catch (RuntimeException e) {
            log.warn("Final commit of the publish consumer failed: {}", e.toString());
        }
        try {
            // Leaves the group, which hands our partitions to the other nodes right away.
            consumer.close(CloseOptions.timeout(requestTimeout));
        } catch (RuntimeException e) {
            log.warn("Closing the publish consumer failed: {}", e.toString());
        } finally {
            handled.clear();
            running = false;
        }
        try {
            setOwned(Set.of());
        } catch (RuntimeException e) {
            log.error("Ownership listener failed while the publish consumer stopped", e);
        }
    }

    /** Commits synchronously; a wakeup from {@link #close()} must not cost the commit, so it retries once. */
    private void commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        try {
            try {
                consumer.commitSync(offsets, requestTimeout);
            } catch (WakeupException e) {
                consumer.commitSync(offsets, requestTimeout);
            }
            handled.keySet().removeAll(offsets.keySet());
        } catch (KafkaException e) {
            // At-least-once still holds: the next owner starts from the last committed offset.
            commitErrors.increment();
            log.warn("Committing offsets {} of {} failed; these records may be routed again: {}", offsets, topic,
                    e.toString());
        }
    }

    private void setOwned(Set<Integer> now) {
        if (!now.equals(owned)) {
            owned = Set.copyOf(now);
            ownershipListener.accept(owned);
        }
    }

    /** Runs on the consumer thread, inside {@code poll} or {@code close}. */
    private final class Rebalance implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return; // cooperative rebalancing reports every round, also those that move nothing here
            }
            Set<Integer> now = new HashSet<>(owned);
            partitions.forEach(p -> now.add(p.partition()));
            log.info("Publish partitions assigned to this node: {}", sorted(partitions));
            setOwned(now);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (TopicPartition p : partitions) {
                OffsetAndMetadata offset = handled.get(p);
                if (offset != null) {
                    offsets.put(p, offset);
                }
            }
            commit(offsets);
            log.info("Publish partitions revoked from this node: {}", sorted(partitions));
            forget(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            // Already owned by someone else: committing now would fail or overwrite their progress.
            log.warn("Publish partitions lost by this node (another node may already route them): {}",
                    sorted(partitions));
            forget(partitions);
        }

        private void forget(Collection<TopicPartition> partitions) {
            handled.keySet().removeAll(partitions);
            Set<Integer> now = new HashSet<>(owned);
            partitions.forEach(p -> now.remove(p.partition()));
            setOwned(now);
        }

        private List<Integer> sorted(Collection<TopicPartition> partitions) {
            return partitions.stream().map(TopicPartition::partition).sorted().toList();
        }
    }

    /**
     * Stops the loop (interrupting a poll), commits what was handled, leaves the group and waits for
     * the thread to end. Idempotent; safe before {@link #start()}.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopping = true;
        if (thread == null) {
            return;
        }
        consumer.wakeup();
        if (Thread.currentThread() == thread) {
            return; // called from a handler: the loop ends after this record
        }
        // Bounded: the final commit and the group leave each take at most one request timeout.
        Duration bound = requestTimeout.multipliedBy(3);
        try {
            thread.join(bound.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("Publish consumer thread did not stop within {}; a handler may be blocked", bound);
        }
    }
}
