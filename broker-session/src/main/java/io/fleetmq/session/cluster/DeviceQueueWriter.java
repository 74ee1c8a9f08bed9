package io.fleetmq.session.cluster;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.session.MessageDrops;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves messages for persistent DEVICE sessions from {@code device.persisted} into their queues in
 * Redis (DESIGN.md, "The publish path", step 4), and tells the node where the client is connected
 * that its queue grew. Runs on the {@code device.persisted} consumer thread of every node (one
 * consumer group), so each client's messages are queued by one node at a time, in order.
 *
 * <p>Offsets are committed only once Redis stored the batch; while Redis is away the batch is read
 * again and again, and the queues' deduplication by source offset makes that safe.
 */
public final class DeviceQueueWriter {

    private static final Logger log = LoggerFactory.getLogger(DeviceQueueWriter.class);

    private final DeviceQueues queues;
    private final SessionDirectory directory;
    private final Membership membership;
    private final ClusterProducer producer;
    private final BrokerTopics topics;
    private final MessageDrops drops;
    private final Duration timeout;
    private final List<CompletableFuture<?>> inFlight = new ArrayList<>();

    public DeviceQueueWriter(DeviceQueues queues, SessionDirectory directory, Membership membership,
            ClusterProducer producer, BrokerTopics topics, MessageDrops drops, Duration timeout) {
        this.queues = queues;
        this.directory = directory;
        this.membership = membership;
        this.producer = producer;
        this.topics = topics;
        this.drops = drops;
        this.timeout = timeout;
    }

    /** One record of {@code device.persisted}: a message for the client the record is keyed by. */
    public void handle(Downlink d, int partition, long offset) {
        if (d.matched().isEmpty()) {
            return;
        }
        String clientId = d.matched().get(0).clientId();
        inFlight.add(queues.append(clientId, d.sourcePartition(), d.sourceOffset(), ClusterCodec.encode(d))
                .thenCompose(appended -> {
                    for (long i = 0; i < appended.dropped(); i++) {
                        drops.count(MessageDrops.Reason.SESSION_QUEUE_FULL);
                    }
                    if (appended.duplicate()) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return tell(clientId, appended.seq(), d);
                }).toCompletableFuture());
    }

    /** The node holding the connected session learns of the new entry at once. */
    private CompletableFuture<?> tell(String clientId, long seq, Downlink d) {
        SessionState state = directory.get(clientId).orElse(null);
        if (state == null || !state.connected() || !membership.isAlive(state.nodeId(), state.nodeIncarnation())) {
            return CompletableFuture.completedFuture(null); // it reads its queue when it connects
        }
        return producer.send(topics.node(state.nodeId()), clientId,
                ClusterCodec.encode(new NodeCommand.Queued(clientId, seq, d)));
    }

    /** Before committing: everything of the batch is in Redis; false (after a pause) to read it again. */
    public boolean flushed() {
        boolean ok = true;
        for (CompletableFuture<?> f : inFlight) {
            try {
                f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                if (ok) {
                    log.warn("DEVICE queue writes failed; the batch is written again: {}", e.toString());
                }
                ok = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ok = false;
            }
        }
        inFlight.clear();
        if (!ok) {
            try {
                Thread.sleep(500); // Redis is away: do not spin
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return ok;
    }
}
