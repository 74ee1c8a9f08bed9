package io.fleetmq.session;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.log.LogLimit;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.persistence.redis.DeviceQueues;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivery from the DEVICE queue of a persistent DEVICE session, while it is connected: entries
 * are read as far as the client's receive window allows, sent with the packet identifier they were
 * sent with before, and removed from the queue once delivered.
 *
 * <p>Entries appended while the session is connected are announced to it ({@link #queued}). The
 * first read of a connection registers it in the queue ({@link #tag}), atomically with the read, and
 * every append answers the writer with the registered reader: an entry the first read did not see
 * is announced to this connection, however late the writer's node learns of the connection itself.
 * The connection's end releases the registration.
 */
final class DeviceQueueReader {

    private static final Logger log = LoggerFactory.getLogger(DeviceQueueReader.class);

    /** Shared by every client: a storm of failures costs a few lines, see {@link LogLimit}. */
    private static final LogLimit LOG_LIMIT = new LogLimit(20, java.time.Duration.ofSeconds(10));

    /**
     * How long the packet identifier of a QoS 1 entry waits before it is written to the queue: an
     * acknowledgement within that time makes the write moot, so a client that keeps up costs one
     * Redis write per message (the remove) instead of two. Both then ride on the client's next
     * append as a rule ({@link DeviceQueueStore#sentWithSoon}, {@link DeviceQueueStore#removeSoon}).
     * The connection's end writes what waits, at once.
     */
    static final long PACKET_ID_DELAY_MILLIS = 50;

    /** An entry of the queue in flight: the queue keeps it until its flow completes. */
    final class Entry implements OutboundFlow.Origin {
        private final long seq;
        private final int qos;

        Entry(long seq, int qos) {
            this.seq = seq;
            this.qos = qos;
        }

        @Override
        public void sent(int packetId) {
            if (qos == 1) {
                unrecorded.put(seq, packetId);
                if (!flushScheduled) {
                    flushScheduled = true;
                    services.timers().schedule(() -> tell.accept(DeviceQueueReader.this::recordPacketIds),
                            PACKET_ID_DELAY_MILLIS, TimeUnit.MILLISECONDS);
                }
            } else {
                // QoS 2 at once: the client must get it again under this identifier, or it would
                // take a resend under another for a new message.
                services.deviceQueues().sentWith(clientId, seq, packetId);
            }
        }

        @Override
        public void released(int packetId) {
            services.deviceQueues().sentWith(clientId, seq, -packetId);
        }

        @Override
        public void completed() {
            unrecorded.remove(seq);
            if (qos == 1) {
                // Carried by the client's next append as a rule: no Redis call of its own.
                services.deviceQueues().removeSoon(clientId, seq);
            } else {
                services.deviceQueues().remove(clientId, seq);
            }
        }
    }

    /** Packet identifiers of QoS 1 entries sent and not yet written to the queue, by sequence number. */
    private final java.util.LinkedHashMap<Long, Integer> unrecorded = new java.util.LinkedHashMap<>();
    private boolean flushScheduled;

    private final String clientId;
    private final SessionServices services;
    private final Connection connection;
    private final OutboundFlow outbound;
    private final Consumer<Runnable> tell;
    private final Runnable afterRead;
    private boolean active;
    /** This connection's registration in the queue: node, incarnation and epoch. */
    private String tag;
    /** Whether a read registered {@link #tag}. */
    private boolean registered;
    /** The highest queue entry read or delivered while connected. */
    private long queueSeq;
    private boolean reading;
    /** Entries may wait in the queue beyond {@link #queueSeq}. */
    private boolean behind;
    /**
     * The queue grew while a read was on its way: Redis may have run the read before the new entry
     * was stored, so the read's answer does not say that nothing more waits.
     */
    private boolean grewWhileReading;

    /** @param afterRead fills what room a read left with what else waits for it */
    DeviceQueueReader(String clientId, SessionServices services, Connection connection, OutboundFlow outbound,
            Consumer<Runnable> tell, Runnable afterRead) {
        this.clientId = clientId;
        this.services = services;
        this.connection = connection;
        this.outbound = outbound;
        this.tell = tell;
        this.afterRead = afterRead;
    }

    /** Whether the session is connected and delivers from a DEVICE queue. */
    boolean isActive() {
        return active;
    }

    /**
     * A connection was accepted; {@code active} whether its session delivers from a DEVICE queue,
     * {@code epoch} the connection's epoch.
     */
    void connected(boolean active, long epoch) {
        this.active = active;
        queueSeq = 0;
        behind = active;
        registered = false;
        tag = active ? QueueReaderTag.of(services.cluster().incarnation(), epoch, services.nodeId()) : null;
    }

    /** The connection ended: it no longer wants to hear of new entries. */
    void disconnected() {
        // Both before a next connection's read, which waits for the writes asked for before it.
        recordPacketIds();
        if (services.deviceQueues() != null) {
            services.deviceQueues().flushWrites(clientId);
        }
        if (active) {
            services.deviceQueues().release(clientId, tag);
        }
        active = false;
    }

    /** Writes the packet identifiers of QoS 1 entries that are still unacknowledged. */
    private void recordPacketIds() {
        flushScheduled = false;
        for (java.util.Map.Entry<Long, Integer> e : unrecorded.entrySet()) {
            services.deviceQueues().sentWithSoon(clientId, e.getKey(), e.getValue());
        }
        unrecorded.clear();
    }

    /** Whether {@code origin} is an entry of the queue. */
    static boolean isEntry(OutboundFlow.Origin origin) {
        return origin instanceof Entry;
    }

    /** Reads what waits in the queue beyond {@link #queueSeq}, as far as the receive window allows. */
    void read() {
        if (!active || !connection.isOnline() || reading || !behind) {
            return;
        }
        if (!connection.isWritable()) {
            return; // the socket is full: read again when it drains (SessionActor.writable)
        }
        int room = outbound.room();
        if (room <= 0) {
            return; // an acknowledgement calls again
        }
        reading = true;
        behind = false;
        grewWhileReading = false;
        int max = Math.min(room, 256);
        // The room is the read's until it answers: what arrives in memory meanwhile waits for more.
        outbound.reserve(max);
        ClientConnection conn = connection.current();
        services.deviceQueues().read(clientId, queueSeq, max, registered ? null : tag).whenComplete((entries, error) ->
                tell.accept(() -> onRead(conn, max, entries, error)));
    }

    private void onRead(ClientConnection conn, int max, List<DeviceQueues.Entry> entries, Throwable error) {
        reading = false;
        behind = true;
        if (!connection.is(conn)) {
            read(); // for the connection there is now, whose own read waited for this one to answer
            return;
        }
        outbound.release(max);
        if (error != null) {
            // Redis is away: delivery from the queue pauses and resumes when it is back.
            if (LOG_LIMIT.allow()) {
                log.warn("{}: reading the DEVICE queue failed, trying again: {}{}",
                        ClientText.of(clientId), error.toString(), LOG_LIMIT.suppressedNote());
            }
            services.timers().schedule(() -> tell.accept(this::read), 1, TimeUnit.SECONDS);
            afterRead.run();
            return;
        }
        registered = true;
        for (DeviceQueues.Entry e : entries) {
            if (e.seq() > queueSeq) {
                queueSeq = e.seq();
                deliver(e.seq(), e.value(), e.packetId());
            }
        }
        behind = entries.size() >= max || grewWhileReading;
        read();
        afterRead.run();
    }

    /**
     * The queue grew by an entry: sent at once when nothing waits before it and there is room, else
     * read. Sequence number 0 says only that entries may wait (a writer that stored them once
     * already, and does not know their numbers): read.
     */
    void queued(NodeCommand.Queued q) {
        if (!active || !connection.isOnline()) {
            return; // offline: it waits in the queue
        }
        DeliveryBackpressure backpressure = services.backpressure();
        if (backpressure.enabled() && q.seq() != 0) {
            // The notice comes when the entry is stored, whatever the client's window: how late it is
            // measures the node's path to the queue (Kafka twice, routing, Redis), as a delivery's
            // arrival does for a session without a queue. Entries read later waited for the client.
            backpressure.arrived(q.message().message(), services.clock().getAsLong());
        }
        if (q.seq() == 0) {
            behind = true;
            grewWhileReading |= reading;
            read();
            return;
        }
        if (q.seq() <= queueSeq) {
            return; // delivered already
        }
        if (!reading && !behind && q.seq() == queueSeq + 1 && outbound.room() > 0 && connection.isWritable()) {
            queueSeq = q.seq();
            send(q.seq(), Delivery.of(clientId, q.message().message(), q.message().matched()), 0);
        } else {
            behind = true;
            grewWhileReading |= reading;
            read();
        }
    }

    private void deliver(long seq, byte[] value, int packetId) {
        if (packetId < 0 && !outbound.inUse(-packetId)) {
            // PUBREC came before the client left: the QoS 2 flow continues with PUBREL [MQTT-4.4.0-1].
            outbound.resumeReleased(-packetId, new Entry(seq, 2));
            return;
        }
        if (packetId < 0) {
            return; // its identifier is taken by another flow: it waits for the next reconnect
        }
        Downlink d;
        try {
            d = ClusterCodec.decodeDownlink(value);
        } catch (MessageFormatException e) {
            if (LOG_LIMIT.allow()) {
                log.warn("{}: skipping a malformed DEVICE queue entry: {}{}",
                        ClientText.of(clientId), e.getMessage(), LOG_LIMIT.suppressedNote());
            }
            services.drops().count(MessageDrops.Reason.MALFORMED_RECORD, clientId, null);
            services.deviceQueues().remove(clientId, seq);
            return;
        }
        if (d.message().createdAtMillis() + services.deviceQueues().ttl().toMillis() < services.clock().getAsLong()) {
            services.drops().count(MessageDrops.Reason.EXPIRED, clientId, d.message().topic()); // older than the queue keeps anything
            services.deviceQueues().remove(clientId, seq);
            return;
        }
        send(seq, Delivery.of(clientId, d.message(), d.matched()), packetId);
    }

    private void send(long seq, Delivery d, int packetId) {
        if (d == null || !outbound.send(d, new Entry(seq, d.qos()), packetId, false)) {
            services.deviceQueues().remove(clientId, seq); // not for this client after all, or dropped and counted
        }
    }

    /** The session ended: its queue goes, and what it still held is counted. */
    void deleteQueue() {
        if (services.deviceQueues() != null) {
            // Retried until Redis takes it; this client's next read of its queue waits for it.
            services.deviceQueues().delete(clientId)
                    .thenAccept(held -> services.drops().count(MessageDrops.Reason.SESSION_ENDED, held));
        }
    }
}
