package io.fleetmq.kafka.cluster;

import io.fleetmq.kafka.KafkaClients;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;
import io.fleetmq.kafka.supervise.LoopSupervisor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one single-partition state topic from the beginning and keeps following it on a thread of
 * its own, handing every record to a listener in order. {@link #start()} returns once everything
 * that was in the topic at that moment has been handed over, so the node's copy of the state is
 * complete before it serves clients; {@link #awaitCaughtUp} does the same at any later moment.
 *
 * <p>Supervised ({@link LoopSupervisor}): after an unexpected failure a new consumer resumes at the
 * offset after the last record handed over, so nothing is skipped; records are handed over again
 * only if the failure came between handing one over and noting its offset, and re-applying a
 * compacted state record in order is harmless.
 */
public final class StateFollower implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StateFollower.class);
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(500);

    private final KafkaClients clients;
    private final Admin admin;
    private final TopicPartition partition;
    private final Consumer<ConsumerRecord<String, byte[]>> listener;
    private final Duration requestTimeout;
    private final CompletableFuture<Void> loaded = new CompletableFuture<>();
    private final Object progress = new Object();

    private final LoopSupervisor supervisor;
    /** The offset to read next: after the last record handed over, or the consumer's position. */
    private volatile long position = -1;
    private volatile boolean stopping;
    private volatile KafkaConsumer<String, byte[]> consumer;
    private final Object consumerLock = new Object();
    private Thread thread;

    /** Restarted by a supervisor of its own that nobody watches; see the other constructor. */
    public StateFollower(KafkaClients clients, Admin admin, String topic, Consumer<ConsumerRecord<String, byte[]>> listener) {
        this(clients, admin, topic, listener, null);
    }

    /** @param supervisor restarts the follower after an unexpected failure and is told if it gives up */
    public StateFollower(KafkaClients clients, Admin admin, String topic, Consumer<ConsumerRecord<String, byte[]>> listener,
            LoopSupervisor supervisor) {
        this.clients = Objects.requireNonNull(clients, "clients");
        this.admin = Objects.requireNonNull(admin, "admin");
        this.partition = new TopicPartition(topic, 0);
        this.listener = Objects.requireNonNull(listener, "listener");
        this.requestTimeout = clients.settings().requestTimeout();
        this.supervisor = supervisor != null ? supervisor
                : new LoopSupervisor(new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
                        LoopSupervisor.Policy.defaults());
    }

    /** Starts following and returns once the topic's current content has been read. */
    public synchronized void start(Duration timeout) {
        if (thread != null) {
            throw new IllegalStateException("already started");
        }
        thread = new Thread(this::run, "fleetmq-follow-" + partition.topic());
        thread.setDaemon(true);
        thread.start();
        try {
            loaded.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot read " + partition.topic() + ": " + e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("could not read " + partition.topic() + " within " + timeout.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading " + partition.topic(), e);
        }
    }

    /**
     * Waits until every record committed to the topic before this call has been handed to the
     * listener.
     *
     * @return false if that did not happen within {@code timeout}
     */
    public boolean awaitCaughtUp(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long end;
        try {
            end = admin.listOffsets(Map.of(partition, OffsetSpec.latest()),
                            new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                    .partitionResult(partition).get(timeout.toMillis(), TimeUnit.MILLISECONDS).offset();
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            log.warn("No end offset of {}: {}", partition.topic(), e.toString());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        synchronized (progress) {
            while (position < end) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || stopping) {
                    return false;
                }
                try {
                    progress.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return true;
    }

    private void run() {
        boolean stopped = supervisor.run("follow-" + partition.topic(), () -> stopping, this::follow);
        loaded.completeExceptionally(new IllegalStateException(stopped ? "closed"
                : "gave up; this node no longer learns of its changes"));
        synchronized (progress) {
            progress.notifyAll();
        }
    }

    /** One consumer's life: from the position reached so far (the beginning at first) until closed or failed. */
    private void follow(LoopSupervisor.Progress made) {
        KafkaConsumer<String, byte[]> c = clients.consumer("state-" + partition.topic(), null, Map.of());
        synchronized (consumerLock) { // not this: start() holds this while it waits for the first load
            consumer = c;
            if (stopping) {
                c.wakeup();
            }
        }
        try {
            c.assign(List.of(partition));
            if (position < 0) {
                c.seekToBeginning(List.of(partition));
            } else {
                c.seek(partition, position);
            }
            long end = loaded.isDone() ? -1 : endOffset(c);
            while (!stopping) {
                for (ConsumerRecord<String, byte[]> record : c.poll(POLL_TIMEOUT)) {
                    try {
                        listener.accept(record);
                    } catch (RuntimeException e) {
                        log.error("State listener failed on {} offset {}; the node's copy may miss it",
                                partition.topic(), record.offset(), e);
                    }
                    position = record.offset() + 1;
                }
                long now = c.position(partition, requestTimeout);
                synchronized (progress) {
                    position = now;
                    progress.notifyAll();
                }
                if (!loaded.isDone() && now >= end) {
                    loaded.complete(null);
                }
                made.made();
            }
        } catch (WakeupException e) {
            if (!stopping) {
                throw e;
            }
        } finally {
            try {
                c.close(CloseOptions.timeout(requestTimeout));
            } catch (RuntimeException e) {
                log.warn("Closing the follower of {} failed: {}", partition.topic(), e.toString());
            }
        }
    }

    private long endOffset(KafkaConsumer<String, byte[]> consumer) {
        while (true) {
            try {
                return consumer.endOffsets(List.of(partition), requestTimeout).get(partition);
            } catch (TimeoutException e) {
                log.warn("No end offset of {} within {}; still waiting", partition.topic(), requestTimeout);
            }
        }
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            stopping = true;
            t = thread;
        }
        synchronized (consumerLock) {
            if (consumer != null) {
                consumer.wakeup();
            }
        }
        synchronized (progress) {
            progress.notifyAll();
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(requestTimeout.multipliedBy(2).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
