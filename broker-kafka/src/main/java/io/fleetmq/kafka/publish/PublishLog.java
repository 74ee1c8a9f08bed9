package io.fleetmq.kafka.publish;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import io.fleetmq.core.retained.LogPosition;

/**
 * The entrance of the publish path (DESIGN.md, "The publish path", steps 2 and 3): every incoming
 * PUBLISH is appended to the {@code publish} topic, and the publisher is acknowledged only once the
 * returned future completes.
 *
 * <p>Records are keyed by the publisher's client ID, so one publisher's messages share a partition
 * and keep their order through the whole path (step 5). One instance per node, shared by all client
 * actors; thread-safe.
 */
public final class PublishLog implements AutoCloseable {

    private final ConfirmedProducer producer;
    private volatile BiConsumer<BrokerMessage, LogPosition> retainedStored;
    private volatile StoredListener stored;

    /** Told of a message this node wrote to the {@code publish} topic, once Kafka stored it. */
    @FunctionalInterface
    public interface StoredListener {

        /** Runs on the producer's I/O thread: it must be short and must never block. */
        void stored(BrokerMessage message, int partition, long offset);
    }

    /** With {@link ConfirmedProducer#DEFAULT_MAX_BLOCK}. */
    public PublishLog(KafkaClients clients, MeterRegistry registry) {
        this(clients, registry, ConfirmedProducer.DEFAULT_MAX_BLOCK);
    }

    /**
     * @param maxBlock the longest {@link #append} may hold its caller while Kafka has no metadata or
     *                 no buffer space; after that the future fails instead
     */
    public PublishLog(KafkaClients clients, MeterRegistry registry, Duration maxBlock) {
        this(clients, registry, maxBlock, ConfirmedProducer.DEFAULT_BUFFER);
    }

    /** @param bufferBytes bytes of records held for Kafka before {@link #hasRoom()} says no */
    public PublishLog(KafkaClients clients, MeterRegistry registry, Duration maxBlock, long bufferBytes) {
        String topic = new BrokerTopics(clients.settings().topicPrefix()).publish();
        this.producer = new ConfirmedProducer(clients, "publish", topic, "publish", maxBlock, bufferBytes,
                KafkaClients.SEND_WHEN_FREE, registry); // a PUBACK waits for its record's request
        producer.prepare(); // the first PUBLISH must not wait for metadata on an actor thread
    }

    /**
     * Appends {@code message}; returns within the max-block bound whatever state Kafka is in.
     *
     * @return completes (on the producer's I/O thread) once Kafka stored the message with acks=all;
     *         fails with Kafka's exception if it could not, e.g. a
     *         {@link org.apache.kafka.common.errors.TimeoutException} when Kafka is unreachable
     */
    public CompletableFuture<Void> append(BrokerMessage message) {
        BiConsumer<BrokerMessage, LogPosition> retainedListener = message.retain() ? retainedStored : null;
        StoredListener listener = stored;
        if (retainedListener == null && listener == null) {
            return producer.send(message.publisherId(), message);
        }
        return producer.send(message.publisherId(), message, List.of(), at -> {
            if (retainedListener != null) {
                retainedListener.accept(message, new LogPosition(at.partition(), at.offset()));
            }
            if (listener != null) {
                listener.stored(message, at.partition(), at.offset());
            }
        });
    }

    /**
     * {@link #append}, telling where the message was stored: for callers that report it, such as
     * the admin API's publish.
     *
     * @return completes with the message's partition and offset in the {@code publish} topic once
     *         Kafka stored it; fails as {@link #append} does
     */
    public CompletableFuture<LogPosition> appendAt(BrokerMessage message) {
        BiConsumer<BrokerMessage, LogPosition> listener = retainedStored;
        StoredListener storedListener = stored;
        LogPosition[] at = new LogPosition[1];
        return producer.send(message.publisherId(), message, List.of(), where -> {
            at[0] = new LogPosition(where.partition(), where.offset());
            if (message.retain() && listener != null) {
                listener.accept(message, at[0]);
            }
            if (storedListener != null) {
                storedListener.stored(message, where.partition(), where.offset());
            }
        }).thenApply(ignored -> at[0]);
    }

    /**
     * Tells {@code listener} of every retained message with its position once Kafka stored it and
     * before {@link #append}'s future completes, so the node knows the change before it acknowledges
     * it. Runs on the producer's I/O thread: it must be short and never block.
     */
    public void onRetainedStored(BiConsumer<BrokerMessage, LogPosition> listener) {
        this.retainedStored = listener;
    }

    /**
     * Tells {@code listener} of every message appended here once Kafka stored it, with its place in
     * the topic, before the append's future completes; after {@link #onRetainedStored}'s listener.
     * Stored messages of one partition are told in the order of their offsets.
     */
    public void onStored(StoredListener listener) {
        this.stored = listener;
    }

    /** Whether another append can be queued without blocking; see {@link ConfirmedProducer#hasRoom()}. */
    public boolean hasRoom() {
        return producer.hasRoom();
    }

    /** Runs {@code task} once another append can be queued without blocking. */
    public void whenRoom(Runnable task) {
        producer.whenRoom(task);
    }

    /** Waits up to {@code timeout} for appends in flight to be stored, then closes; idempotent. */
    public void close(Duration timeout) {
        producer.close(timeout);
    }

    /** {@link #close(Duration)} with the Kafka request timeout. */
    @Override
    public void close() {
        producer.close();
    }
}
