package io.fleetmq.kafka.publish;

import io.fleetmq.core.message.BrokerMessage;
import java.util.Objects;

/**
 * A message read back from the {@code publish} topic, with where it was stored: the partition says
 * which node routes it (the owner of that partition), the offset identifies it for logs and for
 * deduplication after a redelivery.
 */
public record PublishedRecord(BrokerMessage message, int partition, long offset) {

    public PublishedRecord {
        Objects.requireNonNull(message, "message");
    }
}
