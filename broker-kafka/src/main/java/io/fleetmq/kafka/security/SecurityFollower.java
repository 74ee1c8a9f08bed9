package io.fleetmq.kafka.security;

import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.supervise.LoopSupervisor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the {@code security} topic from where it ended at {@link #start()} and tells each change to
 * the node. What changed before is already in PostgreSQL, which the node reads after start; after a
 * failure the follower resumes at the position it reached, so no change is missed while the topic
 * keeps it.
 */
public final class SecurityFollower implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SecurityFollower.class);

    private final KafkaClients clients;
    private final TopicPartition partition;
    private final Consumer<SecurityChange> listener;
    private final LoopSupervisor supervisor;
    private volatile boolean stopping;
    private volatile long position = -1;
    private Thread thread;

    public SecurityFollower(KafkaClients clients, BrokerTopics topics, Consumer<SecurityChange> listener,
            LoopSupervisor supervisor) {
        this.clients = clients;
        this.partition = new TopicPartition(topics.security(), 0);
        this.listener = listener;
        this.supervisor = supervisor;
    }

    /** Positions at the end of the topic and starts reading; returns once positioned. */
    public synchronized void start() {
        try (KafkaConsumer<String, byte[]> c = clients.consumer("security", null, Map.of())) {
            c.assign(List.of(partition));
            c.seekToEnd(List.of(partition));
            position = c.position(partition, clients.settings().requestTimeout());
        }
        thread = supervisor.start("security-follower", () -> stopping, this::read);
    }

    private void read(LoopSupervisor.Progress made) {
        try (KafkaConsumer<String, byte[]> c = clients.consumer("security", null, Map.of())) {
            c.assign(List.of(partition));
            c.seek(partition, position);
            while (!stopping) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    SecurityChange change = SecurityChanges.decode(r.value());
                    if (change == null) {
                        log.warn("Skipping an unreadable security change at offset {}", r.offset());
                    } else {
                        listener.accept(change);
                    }
                    position = r.offset() + 1;
                }
                made.made();
            }
        }
    }

    @Override
    public void close() {
        stopping = true;
        Thread t = thread;
        if (t != null) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
