package io.fleetmq.kafka.publish;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.kafka.KafkaClients;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;

/**
 * Writes {@link BrokerMessage}s (or tombstones) to one Kafka topic, each write reported as a future
 * that completes only when Kafka has stored the record: "acknowledged means stored" (DESIGN.md,
 * promise 1) for every topic whose writes someone waits on.
 *
 * <p>Callers are client actors on a shared pool, so a write must never hold their thread for long.
 * {@code KafkaProducer.send} blocks while it has no metadata for the topic or its buffer is full,
 * for up to {@code max.block.ms}; this producer sets that to a small bound of its own (independent of
 * the request timeout) and turns everything {@code send} might throw into a failed future.
 *
 * <p>Futures complete on the producer's I/O thread. Whatever follows a write (a PUBACK, say) should
 * be chained with an {@code ...Async} method and the caller's executor, not run on that thread.
 *
 * <p>A write the producer gives up on because its buffer stayed full for {@code max.block.ms} does not fail: it is
 * deferred, and handed to Kafka again once there is room, before any write that came after it.
 *
 * <p>Meters: timer {@code fleetmq.kafka.produce.latency} (successful writes, from the call to
 * Kafka's acknowledgement), counter {@code fleetmq.kafka.produce.errors} (tagged with the
 * exception's class name) and counter {@code fleetmq.kafka.produce.deferred} (writes deferred for a
 * full buffer), all tagged {@code topic} with the topic's role, not its prefixed name.
 *
 * <p>This would sit more naturally in {@code io.fleetmq.kafka} next to {@link KafkaClients}; it lives
 * here because the publish path is its first user.
 */
public final class ConfirmedProducer implements AutoCloseable {

    /** How long a write may block its caller when Kafka has no room or no metadata. */
    public static final Duration DEFAULT_MAX_BLOCK = Duration.ofSeconds(1);
    /** Kafka's default {@code buffer.memory}. */
    public static final long DEFAULT_BUFFER = 32L * 1024 * 1024;

    static final String LATENCY_METER = "fleetmq.kafka.produce.latency";
    static final String ERRORS_METER = "fleetmq.kafka.produce.errors";
    static final String DEFERRED_METER = "fleetmq.kafka.produce.deferred";

    private final KafkaProducer<String, byte[]> producer;
    private final String topic;
    private final String role;
    private final MeterRegistry registry;
    private final Timer latency;
    private final Duration closeTimeout;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Callers waiting for buffer space, told by the room watcher. */
    private final java.util.Queue<Runnable> waitingForRoom = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicBoolean watching = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile org.apache.kafka.common.Metric bufferAvailable;
    private final long roomNeeded;
    /** The buffer's free bytes are read under its lock; on the per-PUBLISH path, at most once a millisecond. */
    private static final long ROOM_RECHECK_NANOS = 1_000_000;
    private volatile boolean roomSeen;
    private volatile long roomSeenAt;
    /**
     * Writes the producer did not take because its buffer stayed full for {@code max.block.ms}, and
     * writes that came after them: handed to Kafka again, in order, once it has room. Guarded by itself.
     */
    private final java.util.ArrayDeque<Pending> deferred = new java.util.ArrayDeque<>();
    /** Whether {@link #deferred} holds writes: every write then queues behind them. */
    private volatile boolean deferring;
    private final io.micrometer.core.instrument.Counter deferredWrites;

    /** Set when the producer could not take the head of {@link #deferred}; the watcher's thread only. */
    private boolean headRefused;

    /** A write waiting for room: only writes that found the buffer full, and those behind them, are kept so. */
    private record Pending(String key, byte[] value, List<Header> headers, Consumer<RecordMetadata> onStored,
            CompletableFuture<Void> result) {
    }

    /**
     * @param purpose  names the producer in Kafka's client ID
     * @param topic    the full topic name
     * @param role     the topic's role for meter tags, e.g. {@code publish}; bounded, unlike names
     * @param maxBlock the longest a call may wait for metadata or buffer space before its future fails
     */
    public ConfirmedProducer(KafkaClients clients, String purpose, String topic, String role, Duration maxBlock,
            MeterRegistry registry) {
        this(clients, purpose, topic, role, maxBlock, DEFAULT_BUFFER, registry);
    }

    /** @param bufferBytes the producer's {@code buffer.memory}: records held for Kafka before callers wait */
    public ConfirmedProducer(KafkaClients clients, String purpose, String topic, String role, Duration maxBlock,
            long bufferBytes, MeterRegistry registry) {
        this(clients, purpose, topic, role, maxBlock, bufferBytes, Map.of(), registry);
    }

    /** @param tuning Kafka producer settings of this producer over those of {@link KafkaClients#producer} */
    public ConfirmedProducer(KafkaClients clients, String purpose, String topic, String role, Duration maxBlock,
            long bufferBytes, Map<String, Object> tuning, MeterRegistry registry) {
        this.topic = Objects.requireNonNull(topic, "topic");
        this.role = Objects.requireNonNull(role, "role");
        this.registry = Objects.requireNonNull(registry, "registry");
        if (maxBlock.isNegative()) {
            throw new IllegalArgumentException("maxBlock must not be negative: " + maxBlock);
        }
        this.closeTimeout = clients.settings().requestTimeout();
        this.latency = Timer.builder(LATENCY_METER)
                .description("Time from handing a record to the Kafka producer until Kafka confirmed storing it")
                .tag("topic", role)
                .register(registry);
        this.deferredWrites = io.micrometer.core.instrument.Counter.builder(DEFERRED_METER)
                .description("Writes Kafka's producer could not take within its max-block time, written again"
                        + " once it had room")
                .tag("topic", role)
                .register(registry);
        Map<String, Object> overrides = new java.util.HashMap<>(tuning);
        overrides.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlock.toMillis());
        overrides.put(ProducerConfig.BUFFER_MEMORY_CONFIG, bufferBytes);
        this.producer = clients.producer(purpose, overrides);
        // Room for a couple of large records; below that, callers wait instead of blocking.
        this.roomNeeded = Math.min(2L * 1024 * 1024, bufferBytes / 2);
    }

    /**
     * Fetches the topic's metadata now, so that no later write waits for it on its caller's thread
     * (Kafka keeps it, refreshing it in the background, while the topic is written to).
     */
    public void prepare() {
        try {
            producer.partitionsFor(topic);
        } catch (RuntimeException e) {
            LoggerFactory.getLogger(ConfirmedProducer.class).warn("No metadata of {} yet: {}", topic, e.toString());
        }
    }

    /**
     * Whether the producer's buffer has room for another record now. While Kafka is slow or away the
     * buffer fills; a caller that writes anyway blocks its thread (up to the max-block bound), so
     * callers on shared threads ask first and wait with {@link #whenRoom} instead.
     */
    public boolean hasRoom() {
        if (deferring) {
            return false; // earlier writes wait for room: a new one would queue behind them
        }
        long now = System.nanoTime();
        if (roomSeen && now - roomSeenAt < ROOM_RECHECK_NANOS) {
            return true; // checked a moment ago: far less than the margin can have been written since
        }
        boolean room = bufferHasRoom();
        roomSeen = room;
        roomSeenAt = now;
        return room;
    }

    private boolean bufferHasRoom() {
        org.apache.kafka.common.Metric m = bufferAvailable;
        if (m == null) {
            for (var e : producer.metrics().entrySet()) {
                if (e.getKey().name().equals("buffer-available-bytes") && e.getKey().group().equals("producer-metrics")) {
                    m = e.getValue();
                    bufferAvailable = m;
                    break;
                }
            }
            if (m == null) {
                return true;
            }
        }
        return ((Number) m.metricValue()).doubleValue() >= roomNeeded;
    }

    /** Runs {@code task} (on a watcher thread) once the buffer has room again; at once if it has. */
    public void whenRoom(Runnable task) {
        waitingForRoom.add(task);
        watch();
    }

    private void watch() {
        if (watching.compareAndSet(false, true)) {
            Thread watcher = new Thread(this::watchRoom, "fleetmq-" + role + "-room");
            watcher.setDaemon(true);
            watcher.start();
        }
    }

    private void watchRoom() {
        while (true) {
            if (closed.get()) {
                failDeferred();
                tellWaiters();
            } else if (bufferHasRoom() && handDeferred()) {
                tellWaiters();
            } else {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (idle()) {
                watching.set(false);
                // A waiter or write that arrived just now either sees watching false and starts a
                // watcher, or is seen here.
                if (idle() || !watching.compareAndSet(false, true)) {
                    return;
                }
            }
        }
    }

    private boolean idle() {
        return waitingForRoom.isEmpty() && !deferring;
    }

    private void tellWaiters() {
        Runnable r;
        while ((r = waitingForRoom.poll()) != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LoggerFactory.getLogger(ConfirmedProducer.class).error("Room listener failed", e);
            }
        }
    }

    /**
     * Hands the deferred writes to Kafka, oldest first. A write stays at the head of the queue until
     * the producer took it, so that nothing written after it can overtake it.
     *
     * @return whether none is left; false when the buffer filled again
     */
    private boolean handDeferred() {
        while (true) {
            Pending next;
            synchronized (deferred) {
                next = deferred.peekFirst();
                if (next == null) {
                    deferring = false;
                    return true;
                }
            }
            headRefused = false;
            hand(next.key(), next.value(), next.headers(), next.onStored(), next.result(), true);
            if (headRefused) {
                return false;
            }
            synchronized (deferred) {
                deferred.pollFirst();
                deferring = !deferred.isEmpty();
            }
        }
    }

    private void failDeferred() {
        List<Pending> left;
        synchronized (deferred) {
            left = new java.util.ArrayList<>(deferred);
            deferred.clear();
            deferring = false;
        }
        for (Pending p : left) {
            failed(p.result(), new IllegalStateException("producer for " + topic + " is closed"));
        }
    }

    /**
     * Writes {@code message} under {@code key}.
     *
     * @return completes when Kafka stored the record; fails with Kafka's exception if it did not, or
     *         with an {@link IllegalArgumentException} if the message cannot be encoded
     */
    public CompletableFuture<Void> send(String key, BrokerMessage message) {
        return send(key, message, List.of(), null);
    }

    /**
     * Writes {@code message} under {@code key} with {@code headers}; {@code onStored} runs with the
     * record's place in the topic once Kafka stored it, before the returned future completes (on the
     * producer's I/O thread, so it must be short and must not block).
     */
    public CompletableFuture<Void> send(String key, BrokerMessage message, List<Header> headers,
            Consumer<RecordMetadata> onStored) {
        byte[] value;
        try {
            value = MessageCodec.encode(message);
        } catch (IllegalArgumentException e) {
            // Permanent: writing it again cannot help (DeadLetters.permanent sees a SerializationException).
            return failed(new CompletableFuture<>(),
                    new org.apache.kafka.common.errors.SerializationException("cannot encode: " + e.getMessage(), e));
        }
        return write(key, value, headers, onStored);
    }

    /** Writes a record with a null value, which a compacted topic reads as "key deleted". */
    public CompletableFuture<Void> sendTombstone(String key) {
        return write(key, null);
    }

    /** {@link #sendTombstone(String)} with {@code headers}. */
    public CompletableFuture<Void> sendTombstone(String key, List<Header> headers) {
        return write(key, null, headers, null);
    }

    private CompletableFuture<Void> write(String key, byte[] value) {
        return write(key, value, List.of(), null);
    }

    private CompletableFuture<Void> write(String key, byte[] value, List<Header> headers,
            Consumer<RecordMetadata> onStored) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        if (closed.get()) {
            return failed(result, new IllegalStateException("producer for " + topic + " is closed"));
        }
        if (deferring) {
            synchronized (deferred) {
                if (deferring) {
                    // Behind the writes that wait for room, in order.
                    deferred.addLast(new Pending(key, value, headers, onStored, result));
                    watch();
                    return result;
                }
            }
        }
        hand(key, value, headers, onStored, result, false);
        return result;
    }

    /**
     * Hands {@code write} to Kafka's producer.
     *
     * <p>A full buffer that stays full for {@code max.block.ms} makes the producer give the record up
     * with a {@link BufferExhaustedException} before it queued it: nothing of it reached Kafka. That
     * is no reason to refuse a message (the caller asked {@link #hasRoom()}, but others may have
     * filled the buffer since): such a write is deferred and handed over again once there is room,
     * ahead of every write that came after it.
     *
     * @param again the write is the head of the deferred ones, which it stays on if the producer
     *              cannot take it ({@link #headRefused} then says so)
     */
    private void hand(String key, byte[] value, List<Header> headers, Consumer<RecordMetadata> onStored,
            CompletableFuture<Void> result, boolean again) {
        long start = System.nanoTime();
        try {
            producer.send(new ProducerRecord<>(topic, null, key, value, headers), (metadata, exception) -> {
                if (exception == null) {
                    latency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                    if (onStored != null) {
                        try {
                            onStored.accept(metadata);
                        } catch (RuntimeException e) {
                            LoggerFactory.getLogger(ConfirmedProducer.class).error("Listener of a stored record of {}"
                                    + " failed", topic, e);
                        }
                    }
                    result.complete(null);
                } else if (exception instanceof BufferExhaustedException && !closed.get()) {
                    // Kafka calls back at once, on this thread, for a record it did not queue.
                    if (again) {
                        headRefused = true;
                    } else {
                        defer(new Pending(key, value, headers, onStored, result));
                    }
                } else {
                    failed(result, exception);
                }
            });
        } catch (RuntimeException e) {
            // Closed underneath us, interrupted, or a Kafka error raised before the record was queued.
            // Kafka reports metadata timeouts through the callback, so this cannot double-count them.
            failed(result, e);
        }
    }

    private void defer(Pending write) {
        deferredWrites.increment();
        synchronized (deferred) {
            deferred.addLast(write);
            deferring = true;
        }
        watch();
    }

    private CompletableFuture<Void> failed(CompletableFuture<Void> result, Throwable cause) {
        if (result.completeExceptionally(cause)) {
            registry.counter(ERRORS_METER, "topic", role, "error", cause.getClass().getSimpleName()).increment();
        }
        return result;
    }

    /**
     * Stops taking writes and waits up to {@code timeout} for those in flight to be stored; any still
     * unconfirmed then fail. Idempotent.
     */
    public void close(Duration timeout) {
        if (closed.compareAndSet(false, true)) {
            failDeferred();
            producer.close(timeout);
        }
    }

    /** {@link #close(Duration)} with the Kafka request timeout. */
    @Override
    public void close() {
        close(closeTimeout);
    }
}
