package io.fleetmq.kafka;

import io.fleetmq.core.message.MessageFormatException;
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
import java.util.function.BooleanSupplier;
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
import io.fleetmq.kafka.supervise.LoopSupervisor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's member of a consumer group that spans all nodes: each partition is handled by exactly
 * one node at a time, one thread per node calls the handler for each record in partition order.
 *
 * <p>At-least-once: offsets are committed only after the handler returned for every record of a
 * poll and the {@code beforeCommit} barrier said that what the handler started is done (say, its
 * own writes to Kafka are stored). If the barrier fails, the batch is read again. Partitions are
 * committed synchronously when revoked, so the next owner starts exactly after this one.
 *
 * <p>Nothing in one record stops the loop: a record that does not decode goes to the dead-letter
 * topic where the consumer has {@link Hooks#withDeadLetters} (else it is skipped), a handler that
 * throws is logged; each is counted in {@code fleetmq.messages.dropped} (reasons {@code dead_letter}
 * or {@code malformed_record}, {@code handler_failed}). Anything else ends the consumer: it commits
 * what it handled and leaves the group, and its {@link LoopSupervisor} starts a new consumer after a
 * backoff, which rejoins the group and reads on from the committed offsets (records handled and not
 * committed come again: this is at-least-once anyway). If the supervisor gives up, the partitions
 * stay with the healthy nodes; {@link #isRunning()} and {@link #failure()} tell the node's health
 * check.
 *
 * @param <T> what a record decodes to
 */
public final class GroupConsumer<T> implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GroupConsumer.class);

    static final String DROPPED_METER = "fleetmq.messages.dropped";
    static final String COMMIT_ERRORS_METER = "fleetmq.kafka.commit.errors";

    /** Decodes a record value. */
    @FunctionalInterface
    public interface Decoder<T> {
        T decode(byte[] value) throws MessageFormatException;
    }

    /** Handles one decoded record. */
    @FunctionalInterface
    public interface Handler<T> {
        void handle(T value, int partition, long offset);
    }

    /** The optional hooks of a consumer; every one runs on the consumer thread. */
    public record Hooks(BooleanSupplier beforeCommit, Consumer<Set<Integer>> ownership, Runnable idle,
                        Duration pollTimeout, Duration sessionTimeout, LoopSupervisor supervisor,
                        DeadLetters deadLetters, Duration commitInterval) {

        public static Hooks none() {
            return new Hooks(() -> true, owned -> { }, () -> { }, Duration.ofSeconds(1), null, null, null, Duration.ZERO);
        }

        /**
         * Commits handled batches at most this often (and whenever a poll finds nothing new, a
         * partition is revoked or the consumer stops), instead of after every batch: for consumers
         * whose handlers recognise a record handled again, where a commit per batch of a few records
         * costs more than the batch. After a crash the next owner handles up to this much again.
         */
        public Hooks withCommitInterval(Duration interval) {
            return new Hooks(beforeCommit, ownership, idle, pollTimeout, sessionTimeout, supervisor, deadLetters,
                    interval);
        }

        public Hooks withBeforeCommit(BooleanSupplier b) {
            return new Hooks(b, ownership, idle, pollTimeout, sessionTimeout, supervisor, deadLetters, commitInterval);
        }

        public Hooks withOwnership(Consumer<Set<Integer>> o) {
            return new Hooks(beforeCommit, o, idle, pollTimeout, sessionTimeout, supervisor, deadLetters, commitInterval);
        }

        public Hooks withIdle(Runnable i, Duration everyAtMost) {
            return new Hooks(beforeCommit, ownership, i, everyAtMost, sessionTimeout, supervisor, deadLetters, commitInterval);
        }

        /**
         * The node's supervisor, which restarts the loop after an unexpected failure and is told if
         * it gives up; without one, the consumer restarts under a supervisor of its own that nobody
         * watches (its give-up shows only in {@link #isRunning()}).
         */
        public Hooks withSupervisor(LoopSupervisor s) {
            return new Hooks(beforeCommit, ownership, idle, pollTimeout, sessionTimeout, s, deadLetters, commitInterval);
        }

        /**
         * Records that do not decode go to the dead-letter topic (counted as {@code dead_letter})
         * instead of being skipped; a batch is committed only once its dead letters are stored.
         */
        public Hooks withDeadLetters(DeadLetters d) {
            return new Hooks(beforeCommit, ownership, idle, pollTimeout, sessionTimeout, supervisor, d, commitInterval);
        }

        /**
         * How long Kafka waits for a silent member before giving its partitions to the others: the
         * time a dead node's partitions stand still. Kafka brokers refuse values below their
         * {@code group.min.session.timeout.ms} (6 s by default).
         */
        public Hooks withSessionTimeout(Duration timeout) {
            return new Hooks(beforeCommit, ownership, idle, pollTimeout, timeout, supervisor, deadLetters, commitInterval);
        }
    }

    private final KafkaClients clients;
    private final String topic;
    private final String role;
    private final String groupId;
    /** While a dependency is away a batch is read again every few hundred milliseconds: a line now and then. */
    private final io.fleetmq.core.log.LogLimit rereadLog = new io.fleetmq.core.log.LogLimit(1, Duration.ofSeconds(30));
    private final Decoder<T> decoder;
    private final Handler<T> handler;
    private final Hooks hooks;
    private final Duration requestTimeout;
    private final Counter malformed;
    private final Counter handlerFailed;
    private final Counter commitErrors;
    private final LoopSupervisor supervisor;
    private Map<String, Object> overrides;

    private boolean closed;
    private volatile boolean stopping;
    private volatile boolean running;
    private volatile Throwable failure;
    private volatile Set<Integer> owned = Set.of();
    /** Records in the owned partitions not yet read, as of the last poll. */
    private volatile long lag;
    /** Lag by partition number as of the last poll; 0 for partitions the node does not own. */
    private volatile long[] partitionLags = new long[0];
    /** Replaced by each restart; written under {@code consumerLock} so close() wakes the current one. */
    private volatile KafkaConsumer<String, byte[]> consumer;
    private final Object consumerLock = new Object();
    private Thread thread;

    /** Offsets (next to read) of records handled but not yet committed synchronously; consumer thread only. */
    private final Map<TopicPartition, OffsetAndMetadata> handled = new HashMap<>();
    /** Offsets handled since the last asynchronous commit; consumer thread only. */
    private final Map<TopicPartition, OffsetAndMetadata> uncommitted = new HashMap<>();
    /** When the last asynchronous commit was sent ({@link System#nanoTime()}); consumer thread only. */
    private long committedAt;

    /**
     * @param role names the consumer in thread names, client IDs and meter tags, e.g. {@code publish}
     */
    public GroupConsumer(KafkaClients clients, MeterRegistry registry, String topic, String groupId, String role,
            Decoder<T> decoder, Handler<T> handler, Hooks hooks) {
        this.clients = Objects.requireNonNull(clients, "clients");
        this.topic = Objects.requireNonNull(topic, "topic");
        this.groupId = Objects.requireNonNull(groupId, "groupId");
        this.role = Objects.requireNonNull(role, "role");
        this.decoder = Objects.requireNonNull(decoder, "decoder");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.hooks = Objects.requireNonNull(hooks, "hooks");
        this.requestTimeout = clients.settings().requestTimeout();
        this.malformed = registry.counter(DROPPED_METER, "reason", "malformed_record");
        this.handlerFailed = registry.counter(DROPPED_METER, "reason", "handler_failed");
        this.commitErrors = registry.counter(COMMIT_ERRORS_METER, "topic", role);
        this.supervisor = hooks.supervisor() != null ? hooks.supervisor()
                : new LoopSupervisor(registry, LoopSupervisor.Policy.defaults());
    }

    /** Joins the group and starts consuming on a thread of its own. At most once per instance. */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException(role + " consumer is closed");
        }
        if (thread != null) {
            throw new IllegalStateException(role + " consumer already started");
        }
        // Cooperative rebalancing: a node joining or leaving moves only the partitions that change
        // owner, instead of pausing every node while all partitions are reassigned.
        overrides = new HashMap<>();
        overrides.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        if (hooks.sessionTimeout() != null) {
            overrides.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int) hooks.sessionTimeout().toMillis());
            overrides.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, (int) Math.max(100, hooks.sessionTimeout().toMillis() / 4));
        }
        running = true;
        thread = new Thread(this::run, "fleetmq-" + role + "-consumer");
        thread.setDaemon(true);
        thread.start();
    }

    public Set<Integer> ownedPartitions() {
        return owned;
    }

    public boolean isRunning() {
        return running;
    }

    /**
     * Records in this node's partitions that it has not read yet, as of its last poll (from the
     * high watermarks of its fetches; 0 before the first fetch and while it owns nothing).
     */
    public long lag() {
        return lag;
    }

    /**
     * Records of partition {@code partition} this node has not read yet, as of its last poll: 0 when
     * it does not own the partition. Reads an array, so a gauge per partition costs a scrape nothing.
     */
    public long lag(int partition) {
        long[] lags = partitionLags;
        return partition < lags.length ? lags[partition] : 0;
    }

    private long currentLag() {
        long sum = 0;
        java.util.Set<TopicPartition> owned = consumer.assignment();
        int size = 0;
        for (TopicPartition tp : owned) {
            size = Math.max(size, tp.partition() + 1);
        }
        long[] lags = new long[size];
        for (TopicPartition tp : owned) {
            long l = consumer.currentLag(tp).orElse(0);
            lags[tp.partition()] = l;
            sum += l;
        }
        partitionLags = lags;
        return sum;
    }

    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    private void run() {
        try {
            supervisor.run(role + "-consumer", () -> stopping, this::consume);
        } finally {
            running = false;
        }
    }

    /** One consumer's life: joins the group, consumes until closed or until it fails. */
    private void consume(LoopSupervisor.Progress progress) {
        KafkaConsumer<String, byte[]> created = clients.meteredConsumer(role, groupId, overrides);
        synchronized (consumerLock) {
            consumer = created;
            if (stopping) {
                created.wakeup(); // closed while the consumer was being created
            }
        }
        committedAt = System.nanoTime(); // the first commit comes after the interval, or when idle
        try {
            consumer.subscribe(List.of(topic), new Rebalance());
            while (!stopping) {
                ConsumerRecords<String, byte[]> records = consumer.poll(hooks.pollTimeout());
                lag = currentLag();
                hooks.idle().run();
                if (records.isEmpty()) {
                    commitAsync(); // nothing new: what waited for the interval goes now
                    progress.made();
                    continue;
                }
                Map<TopicPartition, OffsetAndMetadata> batch = new HashMap<>();
                Map<TopicPartition, Long> firsts = new HashMap<>();
                for (TopicPartition partition : records.partitions()) {
                    long next = -1;
                    for (ConsumerRecord<String, byte[]> record : records.records(partition)) {
                        firsts.putIfAbsent(partition, record.offset());
                        deliver(record);
                        next = record.offset() + 1;
                    }
                    batch.put(partition, new OffsetAndMetadata(next));
                }
                if (!workDone()) {
                    // What the handler started did not complete: read the batch again.
                    if (rereadLog.allow()) {
                        log.warn("{}: work of a batch did not complete; reading it again{}", role,
                                rereadLog.suppressedNote());
                    }
                    firsts.forEach(consumer::seek);
                    continue;
                }
                handled.putAll(batch);
                uncommitted.putAll(batch);
                if (System.nanoTime() - committedAt >= hooks.commitInterval().toNanos()) {
                    commitAsync();
                }
                progress.made();
            }
        } catch (RuntimeException | Error e) {
            if (!stopping) {
                failure = e; // logged by the supervisor, which starts a new consumer
            }
            throw e;
        } finally {
            shutDown();
        }
    }

    private void commitAsync() {
        if (uncommitted.isEmpty()) {
            return;
        }
        consumer.commitAsync(new HashMap<>(uncommitted), (offsets, exception) -> {
            if (exception != null) {
                // Not fatal: the next commit covers these offsets, at worst records are redelivered.
                commitErrors.increment();
                log.warn("Committing offsets of {} failed: {}", topic, exception.toString());
            }
        });
        uncommitted.clear();
        committedAt = System.nanoTime();
    }

    private void deliver(ConsumerRecord<String, byte[]> record) {
        T value;
        try {
            if (record.value() == null) {
                throw new MessageFormatException("record has no value");
            }
            value = decoder.decode(record.value());
        } catch (MessageFormatException e) {
            if (hooks.deadLetters() != null) {
                hooks.deadLetters().send("malformed record: " + e.getMessage(), topic, record.partition(),
                        record.offset(), null, record.key(), record.value());
                return;
            }
            malformed.increment();
            log.warn("Skipping malformed record in {} partition {} offset {}: {}", topic, record.partition(),
                    record.offset(), e.getMessage());
            return;
        }
        try {
            handler.handle(value, record.partition(), record.offset());
        } catch (RuntimeException e) {
            handlerFailed.increment();
            log.error("Handler failed on {} from {} partition {} offset {}", value, topic, record.partition(),
                    record.offset(), e);
        }
    }

    /**
     * Whether the work the handler started for the batch is done and its dead letters stored; both
     * are asked every time, so neither carries a failure over to the next batch.
     */
    private boolean workDone() {
        boolean handled = hooks.beforeCommit().getAsBoolean();
        boolean deadLettersStored = hooks.deadLetters() == null || hooks.deadLetters().flushed();
        return handled && deadLettersStored;
    }

    private void shutDown() {
        try {
            if (workDone()) {
                commit(new HashMap<>(handled));
            }
        } catch (RuntimeException e) {
            log.warn("Final commit of the {} consumer failed: {}", role, e.toString());
        }
        try {
            // Leaves the group, which hands our partitions to the other nodes right away.
            consumer.close(CloseOptions.timeout(requestTimeout));
        } catch (RuntimeException e) {
            log.warn("Closing the {} consumer failed: {}", role, e.toString());
        } finally {
            handled.clear();
            uncommitted.clear();
        }
        try {
            setOwned(Set.of());
        } catch (RuntimeException e) {
            log.error("Ownership listener failed while the {} consumer stopped", role, e);
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
            commitErrors.increment();
            log.warn("Committing offsets {} of {} failed; these records may be handled again: {}", offsets, topic,
                    e.toString());
        }
    }

    private void setOwned(Set<Integer> now) {
        if (!now.equals(owned)) {
            owned = Set.copyOf(now);
            hooks.ownership().accept(owned);
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
            log.info("{} partitions assigned to this node: {}", role, sorted(partitions));
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
            if (workDone()) {
                commit(offsets);
            }
            log.info("{} partitions revoked from this node: {}", role, sorted(partitions));
            forget(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            // Already owned by someone else: committing now would fail or overwrite their progress.
            log.warn("{} partitions lost by this node (another node may already own them): {}", role,
                    sorted(partitions));
            forget(partitions);
        }

        private void forget(Collection<TopicPartition> partitions) {
            handled.keySet().removeAll(partitions);
            uncommitted.keySet().removeAll(partitions);
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
        synchronized (consumerLock) {
            if (consumer != null) {
                consumer.wakeup();
            }
        }
        if (Thread.currentThread() == thread) {
            return; // called from a handler: the loop ends after this record
        }
        Duration bound = requestTimeout.multipliedBy(3);
        try {
            thread.join(bound.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("{} consumer thread did not stop within {}; a handler may be blocked", role, bound);
        }
    }
}
