package io.fleetmq.kafka.security;

import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Announces changes of credentials, rules and blocked clients on the {@code security} topic, which
 * every node follows ({@link SecurityFollower}). PostgreSQL holds the state; a change is written
 * there first and announced after, so a node that reads an announcement finds the new state.
 */
public final class SecurityChanges implements SecurityChange.Announcer, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SecurityChanges.class);

    private final KafkaProducer<String, byte[]> producer;
    private final String topic;
    private final Counter failed;

    public SecurityChanges(KafkaClients clients, BrokerTopics topics, MeterRegistry meters) {
        this.producer = clients.producer("security", Map.of());
        this.topic = topics.security();
        this.failed = Counter.builder("fleetmq.security.announce.failed")
                .description("Changes of credentials or blocked clients that could not be announced to the other "
                        + "nodes (they see them when their caches expire)")
                .register(meters);
    }

    @Override
    public void announce(SecurityChange change) {
        try {
            producer.send(new ProducerRecord<>(topic, 0, change.kind() + ":" + change.id(), encode(change)),
                    (meta, e) -> {
                        if (e != null) {
                            failed.increment();
                            log.warn("Change of {} {} not announced to the other nodes: {}", change.kind(), change.id(),
                                    e.toString());
                        }
                    });
        } catch (RuntimeException e) {
            failed.increment();
            log.warn("Change of {} {} not announced to the other nodes: {}", change.kind(), change.id(), e.toString());
        }
    }

    static byte[] encode(SecurityChange c) {
        return (c.kind().name() + "\n" + c.id() + "\n" + (c.deleted() ? 1 : 0) + "\n" + (c.accessChanged() ? 1 : 0))
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The change in {@code value}, or null if it is not one (written by a newer build, or damaged). */
    static SecurityChange decode(byte[] value) {
        if (value == null) {
            return null;
        }
        String[] parts = new String(value, StandardCharsets.UTF_8).split("\n", -1);
        if (parts.length < 4) {
            return null;
        }
        try {
            return new SecurityChange(SecurityChange.Kind.valueOf(parts[0]), parts[1], "1".equals(parts[2]),
                    "1".equals(parts[3]));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    @Override
    public void close() {
        producer.close(java.time.Duration.ofSeconds(2));
    }
}
