package io.fleetmq.kafka.retained;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.publish.ConfirmedProducer;
import io.fleetmq.kafka.supervise.LoopSupervisor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.fleetmq.core.retained.LogPosition;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's retained messages, kept in the compacted single-partition {@code retained} topic:
 * key = topic name, value = the {@link MessageCodec} encoding, a tombstone (null value) = no retained
 * message for that topic any more. Compaction keeps the latest record per topic, so the topic is the
 * state and a node rebuilds its retained index by reading it from the start.
 *
 * <p>Every node writes through {@link #put} and {@link #delete} and learns of every change,
 * its own included, only by following the topic ({@link #loadAndFollow}); with one partition all
 * nodes see the changes in the same order and end up with the same index.
 */
public final class RetainedStore implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RetainedStore.class);

    static final String DROPPED_METER = "fleetmq.messages.dropped";
    /** Header of a retained record: the {@link LogPosition} of the PUBLISH it was made from. */
    static final String FROM_HEADER = "fleetmq-publish-position";

    /** Told of every record of the retained log, in its order. */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param message the topic's retained message, {@code null} if it was deleted
         * @param from    where the PUBLISH it came from is in the publish log; {@code null} if unknown
         */
        void applied(String topic, BrokerMessage message, LogPosition from);
    }

    private static final Duration POLL_TIMEOUT = Duration.ofSeconds(1);

    private final KafkaClients clients;
    private final TopicPartition partition;
    private final ConfirmedProducer producer;
    private final Duration requestTimeout;
    private final Counter malformed;
    private final Counter listenerFailed;
    /** Completes when the follower has read up to the end offset seen at its start. */
    private final CompletableFuture<Void> loaded = new CompletableFuture<>();

    private boolean closed;
    private volatile boolean stopping;
    private volatile Throwable failure;
    private KafkaConsumer<String, byte[]> consumer;
    private Thread follower;
    private LoopSupervisor supervisor;
    /** The offset after the last record applied; where a restarted follower goes on. -1 before the first. */
    private volatile long next = -1;

    /** With {@link ConfirmedProducer#DEFAULT_MAX_BLOCK}. */
    public RetainedStore(KafkaClients clients, MeterRegistry registry) {
        this(clients, registry, ConfirmedProducer.DEFAULT_MAX_BLOCK);
    }

    /** @param maxBlock the longest {@link #put} or {@link #delete} may hold its caller */
    public RetainedStore(KafkaClients clients, MeterRegistry registry, Duration maxBlock) {
        this.clients = Objects.requireNonNull(clients, "clients");
        String topic = new BrokerTopics(clients.settings().topicPrefix()).retained();
        this.partition = new TopicPartition(topic, 0);
        this.requestTimeout = clients.settings().requestTimeout();
        this.malformed = registry.counter(DROPPED_METER, "reason", "malformed_record");
        this.listenerFailed = registry.counter(DROPPED_METER, "reason", "handler_failed");
        this.producer = new ConfirmedProducer(clients, "retained", topic, "retained", maxBlock, registry);
        this.supervisor = new LoopSupervisor(registry, LoopSupervisor.Policy.defaults());
    }

    /**
     * The node's supervisor, which restarts the follower after an unexpected failure and is told if it
     * gives up; call before {@link #loadAndFollow}. Without it the store's own supervisor restarts it.
     */
    public RetainedStore supervisedBy(LoopSupervisor s) {
        this.supervisor = Objects.requireNonNull(s, "supervisor");
        return this;
    }

    /**
     * Makes {@code message} the retained message of its topic, replacing any previous one. A message
     * with an empty payload deletes it instead [MQTT-3.3.1-6, MQTT-3.3.1-7].
     *
     * @return completes once Kafka stored the change
     */
    public CompletableFuture<Void> put(BrokerMessage message) {
        return put(message, null);
    }

    /**
     * {@link #put(BrokerMessage)}, the record marked with the position {@code from} of the PUBLISH it
     * comes from (null if none), so that the node which acknowledged that PUBLISH recognises it.
     */
    public CompletableFuture<Void> put(BrokerMessage message, LogPosition from) {
        if (message.payload().length == 0) {
            return delete(message.topic(), from);
        }
        return producer.send(message.topic(), message, headers(from), null);
    }

    /** Removes the retained message of {@code topic}, if any, by writing a tombstone. */
    public CompletableFuture<Void> delete(String topic) {
        return delete(topic, null);
    }

    /** {@link #delete(String)}, marked like {@link #put(BrokerMessage, LogPosition)}. */
    public CompletableFuture<Void> delete(String topic, LogPosition from) {
        return producer.sendTombstone(Objects.requireNonNull(topic, "topic"), headers(from));
    }

    private static List<Header> headers(LogPosition from) {
        return from == null ? List.of()
                : List.of(new RecordHeader(FROM_HEADER, from.toString().getBytes(StandardCharsets.US_ASCII)));
    }

    private static LogPosition from(ConsumerRecord<?, ?> record) {
        Header h = record.headers().lastHeader(FROM_HEADER);
        return h == null || h.value() == null ? null
                : LogPosition.parse(new String(h.value(), StandardCharsets.US_ASCII));
    }

    /**
     * Reads the topic from the beginning and keeps following it, calling {@code listener} for every
     * record in order: with the message, or with {@code null} when the topic's retained message was
     * deleted. Returns once everything that was in the topic when following started has been passed
     * to the listener, so a node can count itself ready only with a complete retained index; while
     * Kafka is unreachable it keeps waiting (and logs why).
     *
     * <p>The listener runs on the follower thread, concurrently with whatever reads the index.
     *
     * @throws IllegalStateException if the store is closed or the follower fails before catching
     *         up, or if called twice
     */
    public void loadAndFollow(BiConsumer<String, BrokerMessage> listener) {
        Objects.requireNonNull(listener, "listener");
        loadAndFollow((topic, message, from) -> listener.accept(topic, message));
    }

    /** {@link #loadAndFollow(BiConsumer)}, telling the listener where each change came from. */
    public void loadAndFollow(Listener listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("retained store is closed");
            }
            if (follower != null) {
                throw new IllegalStateException("retained store is already following");
            }
            follower = new Thread(() -> follow(listener), "fleetmq-retained-follower");
            follower.setDaemon(true);
            follower.start();
        }
        try {
            loaded.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("retained messages could not be loaded: " + e.getCause().getMessage(),
                    e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while loading retained messages", e);
        }
    }

    /** Whether the follower thread stopped by itself, and why. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    /**
     * Supervised: after an unexpected failure a new consumer goes on after the last record applied
     * (re-applying a compacted record in order would be harmless too). If the supervisor gives up,
     * {@link #failure()} says why.
     */
    private void follow(Listener listener) {
        boolean stopped = supervisor.run("follow-retained", () -> stopping, made -> followOnce(listener, made));
        loaded.completeExceptionally(new IllegalStateException(stopped
                ? "retained store closed before it was loaded" : "retained follower gave up: " + failure));
    }

    private void followOnce(Listener listener, LoopSupervisor.Progress made) {
        long started = System.nanoTime();
        long records = 0;
        KafkaConsumer<String, byte[]> c = clients.consumer("retained", null, Map.of());
        synchronized (this) {
            consumer = c;
            if (stopping) {
                c.wakeup();
            }
        }
        try {
            c.assign(List.of(partition));
            if (next < 0) {
                c.seekToBeginning(List.of(partition));
            } else {
                c.seek(partition, next);
            }
            long end = loaded.isDone() ? -1 : endOffset();
            while (!stopping) {
                if (!loaded.isDone() && caughtUp(end)) {
                    log.info("Loaded retained messages: {} records of {} up to offset {} in {} ms", records,
                            partition.topic(), end, (System.nanoTime() - started) / 1_000_000);
                    loaded.complete(null);
                }
                for (ConsumerRecord<String, byte[]> record : c.poll(POLL_TIMEOUT)) {
                    apply(record, listener);
                    next = record.offset() + 1;
                    records++;
                }
                made.made();
            }
        } catch (RuntimeException | Error e) {
            if (!stopping) {
                failure = e; // logged by the supervisor
                throw e;
            }
        } finally {
            try {
                c.close(CloseOptions.timeout(requestTimeout));
            } catch (RuntimeException e) {
                log.warn("Closing the retained follower failed: {}", e.toString());
            }
        }
    }

    /**
     * The end offset at start-up; waits for Kafka rather than failing the node's start. A wakeup
     * from {@link #close()} ends the wait.
     */
    private long endOffset() {
        while (true) {
            try {
                return consumer.endOffsets(List.of(partition), requestTimeout).get(partition);
            } catch (TimeoutException e) {
                log.warn("No end offset of {} from Kafka within {}; still waiting to load retained messages",
                        partition.topic(), requestTimeout);
            }
        }
    }

    private boolean caughtUp(long end) {
        try {
            return consumer.position(partition, requestTimeout) >= end;
        } catch (TimeoutException e) {
            return false; // Kafka is slow; the next poll tries again
        }
    }

    private void apply(ConsumerRecord<String, byte[]> record, Listener listener) {
        String topic = record.key();
        BrokerMessage message = null;
        try {
            if (topic == null) {
                throw new MessageFormatException("record has no key");
            }
            if (record.value() != null) {
                message = MessageCodec.decode(record.value());
                if (!message.topic().equals(topic)) {
                    throw new MessageFormatException("record key " + topic + " is not the message's topic "
                            + message.topic());
                }
            }
        } catch (MessageFormatException e) {
            malformed.increment();
            log.warn("Skipping malformed record in {} offset {}: {}", partition.topic(), record.offset(),
                    e.getMessage());
            return;
        }
        try {
            listener.applied(topic, message, from(record));
        } catch (RuntimeException e) {
            listenerFailed.increment();
            log.error("Retained listener failed on the record for {} at offset {}; the index may miss it", topic,
                    record.offset(), e);
        }
    }

    /**
     * Stops following and closes the producer, waiting up to the request timeout for writes in
     * flight. Idempotent.
     */
    @Override
    public void close() {
        Thread thread;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            stopping = true;
            thread = follower;
            if (thread != null && consumer != null) {
                consumer.wakeup();
            }
        }
        try {
            if (thread != null && thread != Thread.currentThread()) {
                thread.join(requestTimeout.multipliedBy(2).toMillis());
                if (thread.isAlive()) {
                    log.warn("Retained follower did not stop within {}", requestTimeout.multipliedBy(2));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            producer.close();
        }
    }
}
