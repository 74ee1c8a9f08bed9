package io.fleetmq.kafka;

import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where records the broker can never handle go: the {@code <prefix>dead-letter} topic.
 *
 * <p>A consumer that retried such a record would re-read its batch forever and stall the partition
 * (and, on every pass, repeat what the batch's other records already wrote). A record goes here
 * when it cannot be decoded, or when writing what it leads to failed with an error that no retry
 * cures ({@link #permanent}); transient errors are still retried by reading the batch again.
 *
 * <p>Each dead letter keeps the value it would have written (or, when the value itself is too
 * large even for this topic, none) and headers: {@code reason}, {@code source.topic},
 * {@code source.partition}, {@code source.offset}, and {@code target.topic} where a write failed.
 * It is counted in {@code fleetmq.messages.dropped} with reason {@code dead_letter} once Kafka stored
 * it. A consumer commits past the record only after {@link #flushed()} said every dead letter of the
 * batch is stored; otherwise it reads the batch again, and the record comes here again.
 */
public final class DeadLetters {

    private static final Logger log = LoggerFactory.getLogger(DeadLetters.class);

    public static final String REASON = "reason";
    public static final String SOURCE_TOPIC = "source.topic";
    public static final String SOURCE_PARTITION = "source.partition";
    public static final String SOURCE_OFFSET = "source.offset";
    public static final String TARGET_TOPIC = "target.topic";
    /** The meter tag value of a dead letter in {@code fleetmq.messages.dropped}. */
    public static final String DROP_REASON = "dead_letter";

    /** Reasons are error messages; this keeps a header far below the room {@link RecordLimits} leaves. */
    private static final int MAX_REASON_CHARS = 1_000;

    private final ClusterProducer producer;
    private final String topic;
    private final Counter dropped;
    private final Duration timeout;
    private final ConcurrentLinkedQueue<CompletableFuture<?>> pending = new ConcurrentLinkedQueue<>();

    public DeadLetters(ClusterProducer producer, BrokerTopics topics, MeterRegistry registry, Duration timeout) {
        this.producer = producer;
        this.topic = topics.deadLetter();
        this.dropped = registry.counter("fleetmq.messages.dropped", "reason", DROP_REASON);
        this.timeout = timeout;
    }

    /**
     * Whether {@code error} (or what it wraps) can never go away by writing the same record again:
     * the record is too large for its topic, Kafka refuses it as invalid, or it is not decodable.
     */
    public static boolean permanent(Throwable error) {
        int depth = 0;
        for (Throwable t = error; t != null && depth < 10; t = t.getCause(), depth++) {
            if (t instanceof RecordTooLargeException || t instanceof RecordBatchTooLargeException
                    || t instanceof InvalidRecordException || t instanceof SerializationException
                    || t instanceof InvalidTopicException || t instanceof MessageFormatException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Writes a dead letter; {@link #flushed()} tells whether it is stored.
     *
     * @param value the record that cannot be handled (or what it was to be turned into); may be null
     * @param target the topic a failed write was for, null if the record failed as read
     */
    public CompletableFuture<Void> send(String reason, String sourceTopic, int sourcePartition, long sourceOffset,
            String target, String key, byte[] value) {
        String why = reason == null ? "unknown" : reason.length() > MAX_REASON_CHARS
                ? reason.substring(0, MAX_REASON_CHARS) : reason;
        log.warn("Record {}/{}/{} goes to {}: {}", sourceTopic, sourcePartition, sourceOffset, topic, why);
        CompletableFuture<Void> stored = producer.send(topic, null, key, value,
                headers(why, sourceTopic, sourcePartition, sourceOffset, target))
                .handle((m, e) -> {
                    if (e == null) {
                        return CompletableFuture.<Void>completedFuture(null);
                    }
                    if (value != null && permanent(e)) {
                        // Too large even here: keep the reason and the source, which say where to find it.
                        return producer.send(topic, null, key, null, headers(why + "; value of " + value.length
                                + " bytes not kept: " + e.getMessage(), sourceTopic, sourcePartition,
                                sourceOffset, target)).thenApply(x -> (Void) null);
                    }
                    return CompletableFuture.<Void>failedFuture(e);
                }).thenCompose(f -> f).thenRun(dropped::increment);
        pending.add(stored);
        return stored;
    }

    /**
     * Waits for every dead letter written since the last call; false if one was not stored, so the
     * caller reads its batch again (and writes the dead letter again).
     */
    public boolean flushed() {
        if (pending.isEmpty()) {
            return true;
        }
        producer.flush();
        boolean ok = true;
        List<CompletableFuture<?>> taken = new ArrayList<>();
        for (CompletableFuture<?> f; (f = pending.poll()) != null; ) {
            taken.add(f);
        }
        for (CompletableFuture<?> f : taken) {
            try {
                f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                if (ok) {
                    log.warn("A dead letter was not stored; its batch is read again: {}", e.toString());
                }
                ok = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ok = false;
            }
        }
        return ok;
    }

    private static RecordHeaders headers(String reason, String sourceTopic, int sourcePartition, long sourceOffset,
            String target) {
        RecordHeaders h = new RecordHeaders();
        h.add(REASON, reason.getBytes(StandardCharsets.UTF_8));
        h.add(SOURCE_TOPIC, sourceTopic.getBytes(StandardCharsets.UTF_8));
        h.add(SOURCE_PARTITION, Integer.toString(sourcePartition).getBytes(StandardCharsets.UTF_8));
        h.add(SOURCE_OFFSET, Long.toString(sourceOffset).getBytes(StandardCharsets.UTF_8));
        if (target != null) {
            h.add(TARGET_TOPIC, target.getBytes(StandardCharsets.UTF_8));
        }
        return h;
    }
}
