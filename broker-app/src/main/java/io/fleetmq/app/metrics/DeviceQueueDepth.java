package io.fleetmq.app.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code fleetmq_device_queue_messages} (messages waiting in the DEVICE queues of this node's
 * persistent DEVICE sessions, connected or not) and {@code fleetmq_device_queue_largest} (the
 * longest of them), sampled from Redis every interval rather than kept on the message path.
 *
 * <p>A sample asks Redis for the length of each queue (ZCARD, constant time) of at most
 * {@code maxQueues} sessions, all at once without waiting between them, and starts no new round while
 * one is unanswered; so it costs Redis at most {@code maxQueues} cheap commands per interval and the
 * message path nothing. A node with more DEVICE sessions than that reports the first
 * {@code maxQueues} it lists: {@code fleetmq_device_queue_sampled} says how many were counted.
 */
public final class DeviceQueueDepth {

    private final Supplier<Iterable<String>> queues;
    private final Function<String, CompletionStage<Long>> size;
    private final int maxQueues;
    private final AtomicBoolean sampling = new AtomicBoolean();
    private volatile long total;
    private volatile long largest;
    private volatile long sampled;

    /**
     * @param queues    the client IDs of this node's sessions that queue in Redis
     * @param size      the length of one client's queue
     * @param maxQueues the most queues asked for in one sample
     */
    public DeviceQueueDepth(Supplier<Iterable<String>> queues, Function<String, CompletionStage<Long>> size,
            int maxQueues) {
        this.queues = queues;
        this.size = size;
        this.maxQueues = maxQueues;
    }

    /** Registers the gauges; returns them for the caller to remove with its incarnation. */
    public List<Gauge> register(MeterRegistry meters) {
        return List.of(
                Gauge.builder("fleetmq.device.queue.messages", this, d -> d.total)
                        .description("Messages in the DEVICE queues of this node's sessions (sampled from Redis)")
                        .strongReference(true).register(meters),
                Gauge.builder("fleetmq.device.queue.largest", this, d -> d.largest)
                        .description("Messages in the longest DEVICE queue of this node's sessions (sampled)")
                        .strongReference(true).register(meters),
                Gauge.builder("fleetmq.device.queue.sampled", this, d -> d.sampled)
                        .description("DEVICE queues counted by the last sample")
                        .strongReference(true).register(meters));
    }

    /** Takes one sample unless the last one is still unanswered; failed answers count as unknown (0). */
    public void sample() {
        if (!sampling.compareAndSet(false, true)) {
            return;
        }
        List<CompletableFuture<Long>> answers = new ArrayList<>();
        try {
            for (String clientId : queues.get()) {
                if (answers.size() >= maxQueues) {
                    break;
                }
                answers.add(size.apply(clientId).toCompletableFuture().exceptionally(e -> 0L));
            }
        } catch (RuntimeException e) {
            sampling.set(false);
            throw e;
        }
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).whenComplete((done, error) -> {
            long sum = 0;
            long max = 0;
            for (CompletableFuture<Long> a : answers) {
                long n = a.getNow(0L) == null ? 0 : a.getNow(0L);
                sum += n;
                max = Math.max(max, n);
            }
            total = sum;
            largest = max;
            sampled = answers.size();
            sampling.set(false);
        });
    }
}
