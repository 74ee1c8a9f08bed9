package io.fleetmq.session;

import io.fleetmq.persistence.redis.DeviceQueues;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * What a persistent DEVICE session does with its queue: read what waits, remember the packet
 * identifier an entry was sent with, remove what was delivered, delete the queue when the session
 * ends. The queue lives in Redis ({@link #of(DeviceQueues)}); tests use one in memory.
 */
public interface DeviceQueueStore {

    /**
     * Up to {@code max} entries after {@code afterSeq}, oldest first; unless {@code reader} is null,
     * registers it as the queue's reader in the same step, so that whoever appends an entry this
     * read does not see learns where to tell it (see {@link DeviceQueues#read(String, long, int, String)}).
     */
    CompletionStage<List<DeviceQueues.Entry>> read(String clientId, long afterSeq, int max, String reader);

    /** The connection that registered {@code reader} ended; retried until the store takes it. */
    void release(String clientId, String reader);

    /** The entry is delivered (or dropped and counted); retried until the store takes it. */
    void remove(String clientId, long seq);

    /**
     * The client acknowledged the QoS 1 entry: removed as {@link #remove} does, perhaps a moment
     * later, together with the client's next append (see {@link DeviceQueues#removeSoon}).
     */
    default void removeSoon(String clientId, long seq) {
        remove(clientId, seq);
    }

    /**
     * The QoS 1 entry went out with {@code packetId}: remembered as {@link #sentWith} does, perhaps a
     * moment later, together with the client's next append (see {@link DeviceQueues#sentWithSoon}).
     */
    default void sentWithSoon(String clientId, long seq, int packetId) {
        sentWith(clientId, seq, packetId);
    }

    /** Sends what {@link #removeSoon} and {@link #sentWithSoon} left waiting, now: the connection ended. */
    default void flushWrites(String clientId) {
    }

    /**
     * The entry went out with {@code packetId}; negative once PUBREC came and PUBREL went out, so that a
     * resumed session continues the flow where it stood.
     */
    void sentWith(String clientId, long seq, int packetId);

    /** Deletes the queue; completes with the number of entries it still held. */
    CompletionStage<Long> delete(String clientId);

    /** How long an entry is kept at most. */
    Duration ttl();

    /**
     * Stores messages the session held in memory, with the packet identifiers of those it sent
     * ({@code 0} for one it did not), in order, as a step of the client's queue that later reads
     * wait for; see {@link DeviceQueues#store}. Completes with null when a delete made it moot.
     */
    default CompletionStage<DeviceQueues.Appends> store(String clientId, List<DeviceQueues.Item> items,
            int[] packetIds) {
        return java.util.concurrent.CompletableFuture.failedFuture(
                new UnsupportedOperationException("this store keeps no messages handed over live"));
    }

    /** Where the node's writer hands messages to connected sessions before storing them; null for none. */
    default LiveDeliveries live() {
        return null;
    }

    /** The DEVICE queues in Redis. */
    static DeviceQueueStore of(DeviceQueues queues) {
        if (queues == null) {
            return null;
        }
        LiveDeliveries live = new LiveDeliveries();
        return new DeviceQueueStore() {
            @Override
            public CompletionStage<DeviceQueues.Appends> store(String clientId, List<DeviceQueues.Item> items,
                    int[] packetIds) {
                return queues.store(clientId, items, packetIds);
            }

            @Override
            public LiveDeliveries live() {
                return live;
            }

            @Override
            public CompletionStage<List<DeviceQueues.Entry>> read(String clientId, long afterSeq, int max,
                    String reader) {
                return queues.read(clientId, afterSeq, max, reader);
            }

            @Override
            public void release(String clientId, String reader) {
                queues.release(clientId, reader);
            }

            @Override
            public void remove(String clientId, long seq) {
                queues.remove(clientId, seq);
            }

            @Override
            public void removeSoon(String clientId, long seq) {
                queues.removeSoon(clientId, seq);
            }

            @Override
            public void sentWithSoon(String clientId, long seq, int packetId) {
                queues.sentWithSoon(clientId, seq, packetId);
            }

            @Override
            public void flushWrites(String clientId) {
                queues.flushWrites(clientId);
            }

            @Override
            public void sentWith(String clientId, long seq, int packetId) {
                queues.sentWith(clientId, seq, packetId);
            }

            @Override
            public CompletionStage<Long> delete(String clientId) {
                return queues.delete(clientId);
            }

            @Override
            public Duration ttl() {
                return queues.ttl();
            }
        };
    }
}
