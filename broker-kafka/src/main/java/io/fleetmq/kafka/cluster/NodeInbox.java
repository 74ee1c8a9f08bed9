package io.fleetmq.kafka.cluster;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import io.fleetmq.kafka.supervise.LoopSupervisor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What other nodes send this node: the connect sequence's answers and commands ({@code node.<node>})
 * and messages for the subscribers connected here ({@code downlink.<node>}). Both are read from
 * their end at start: whatever was there was meant for connections of an earlier run of the node.
 *
 * <p>Supervised ({@link LoopSupervisor}): after an unexpected failure a new consumer resumes every
 * partition at the offset after the last record handled, so nothing is skipped or handled twice.
 */
public final class NodeInbox implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NodeInbox.class);

    private final KafkaClients clients;
    private final TopicPartition commandsPartition;
    private final List<TopicPartition> downlinkPartitions = new ArrayList<>();
    private final Consumer<NodeCommand> commands;
    private final Consumer<Downlink> downlinks;
    private final Counter malformed;
    private final Duration requestTimeout;
    /** Next offset to read, per downlink partition; written by the inbox thread. */
    private final Map<Integer, Long> downlinkPositions = new ConcurrentHashMap<>();
    private final Object progress = new Object();

    /** Next offset to read of the commands partition; written by the inbox thread. */
    private volatile long commandsPosition;
    private final LoopSupervisor supervisor;
    private final Object consumerLock = new Object();

    private volatile boolean stopping;
    private volatile KafkaConsumer<String, byte[]> consumer;
    private Thread thread;

    /** Restarted by a supervisor of its own that nobody watches; see the other constructor. */
    public NodeInbox(KafkaClients clients, String nodeId, int downlinkPartitionCount, Consumer<NodeCommand> commands,
            Consumer<Downlink> downlinks, MeterRegistry meters) {
        this(clients, nodeId, downlinkPartitionCount, commands, downlinks, meters,
                new LoopSupervisor(meters, LoopSupervisor.Policy.defaults()));
    }

    /** @param supervisor restarts the inbox after an unexpected failure and is told if it gives up */
    public NodeInbox(KafkaClients clients, String nodeId, int downlinkPartitionCount, Consumer<NodeCommand> commands,
            Consumer<Downlink> downlinks, MeterRegistry meters, LoopSupervisor supervisor) {
        this.supervisor = java.util.Objects.requireNonNull(supervisor, "supervisor");
        this.clients = clients;
        BrokerTopics topics = new BrokerTopics(clients.settings().topicPrefix());
        this.commandsPartition = new TopicPartition(topics.node(nodeId), 0);
        for (int p = 0; p < downlinkPartitionCount; p++) {
            downlinkPartitions.add(new TopicPartition(topics.downlink(nodeId), p));
        }
        this.commands = commands;
        this.downlinks = downlinks;
        this.malformed = meters.counter("fleetmq.messages.dropped", "reason", "malformed_record");
        this.requestTimeout = clients.settings().requestTimeout();
    }

    /** Positions at the end of both topics and starts reading; returns once positioned. */
    public synchronized void start() {
        consumer = clients.meteredConsumer("inbox", null, Map.of());
        List<TopicPartition> all = new ArrayList<>(downlinkPartitions);
        all.add(commandsPartition);
        consumer.assign(all);
        consumer.seekToEnd(all);
        for (TopicPartition p : downlinkPartitions) {
            // Resolves the lazy seek now, so nothing written after start() returns is skipped.
            downlinkPositions.put(p.partition(), consumer.position(p, requestTimeout));
        }
        commandsPosition = consumer.position(commandsPartition, requestTimeout);
        thread = new Thread(this::run, "fleetmq-node-inbox");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Waits until this node has read every downlink record that was in {@code partition} when called,
     * so nothing another node routed here earlier is still on its way.
     */
    public boolean awaitDownlink(int partition, long endOffset, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (progress) {
            while (downlinkPositions.getOrDefault(partition, Long.MAX_VALUE) < endOffset) {
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
        supervisor.run("node-inbox", () -> stopping, this::read);
        synchronized (progress) {
            progress.notifyAll();
        }
    }

    /** One consumer's life: the one start() positioned, or after a failure a new one at the positions reached. */
    private void read(LoopSupervisor.Progress made) {
        KafkaConsumer<String, byte[]> c = consumer;
        if (c == null) {
            c = clients.meteredConsumer("inbox", null, Map.of());
            List<TopicPartition> all = new ArrayList<>(downlinkPartitions);
            all.add(commandsPartition);
            c.assign(all);
            for (TopicPartition p : downlinkPartitions) {
                c.seek(p, downlinkPositions.get(p.partition()));
            }
            c.seek(commandsPartition, commandsPosition);
            synchronized (consumerLock) {
                consumer = c;
                if (stopping) {
                    c.wakeup();
                }
            }
        }
        try {
            while (!stopping) {
                for (ConsumerRecord<String, byte[]> record : c.poll(Duration.ofMillis(500))) {
                    handle(record);
                    if (record.topic().equals(commandsPartition.topic())) {
                        commandsPosition = record.offset() + 1;
                    } else {
                        downlinkPositions.put(record.partition(), record.offset() + 1);
                    }
                }
                synchronized (progress) {
                    for (TopicPartition p : downlinkPartitions) {
                        downlinkPositions.put(p.partition(), c.position(p, requestTimeout));
                    }
                    commandsPosition = c.position(commandsPartition, requestTimeout);
                    progress.notifyAll();
                }
                made.made();
            }
        } catch (WakeupException e) {
            if (!stopping) {
                throw e;
            }
        } finally {
            synchronized (consumerLock) {
                consumer = null;
            }
            try {
                c.close(CloseOptions.timeout(requestTimeout));
            } catch (RuntimeException e) {
                log.warn("Closing the node inbox failed: {}", e.toString());
            }
        }
    }

    private void handle(ConsumerRecord<String, byte[]> record) {
        try {
            if (record.topic().equals(commandsPartition.topic())) {
                org.apache.kafka.common.header.Header clear = record.headers().lastHeader(ClusterCodec.CLEAR_STORE_HEADER);
                commands.accept(ClusterCodec.decodeCommand(record.value(), clear == null ? null : clear.value()));
            } else {
                downlinks.accept(ClusterCodec.decodeDownlink(record.value()));
            }
        } catch (MessageFormatException e) {
            malformed.increment();
            log.warn("Skipping malformed record in {} offset {}: {}", record.topic(), record.offset(), e.getMessage());
        } catch (RuntimeException e) {
            log.error("Handling {} offset {} failed", record.topic(), record.offset(), e);
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
