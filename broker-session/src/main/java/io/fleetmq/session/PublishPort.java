package io.fleetmq.session;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.kafka.publish.PublishLog;
import java.util.concurrent.CompletableFuture;

/**
 * Where a session appends what its client publishes (and its will): the node's publish log in
 * Kafka, or an in-memory one in tests.
 */
public interface PublishPort {

    /** Completes once the message is stored; fails if it could not be. */
    CompletableFuture<Void> append(BrokerMessage message);

    /** Whether another append can be queued without blocking. */
    boolean hasRoom();

    /** Runs {@code task} once another append can be queued without blocking. */
    void whenRoom(Runnable task);

    /** The node's publish log in Kafka. */
    static PublishPort of(PublishLog log) {
        if (log == null) {
            return null;
        }
        return new PublishPort() {
            @Override
            public CompletableFuture<Void> append(BrokerMessage message) {
                return log.append(message);
            }

            @Override
            public boolean hasRoom() {
                return log.hasRoom();
            }

            @Override
            public void whenRoom(Runnable task) {
                log.whenRoom(task);
            }
        };
    }
}
