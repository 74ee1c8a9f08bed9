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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
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
 *
 * <p>Once its first read found nothing more waiting, the connection takes its messages from the
 * node's {@code device.persisted} writer before they are stored ({@link LiveDeliveries}): while it
 * keeps up, a message it sends and the client acknowledges never touches Redis. What it holds
 * unacknowledged it stores, in order and with its packet identifier, when the client takes longer
 * than {@link LiveDeliveries#ackWait} allows, when a message cannot go out at once (window full, socket
 * full, QoS 2), and when the connection ends.
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

    /**
     * How long a message sent before it was stored may wait for its acknowledgement before the
     * session stores it, unless the node says otherwise ({@link LiveDeliveries#ackWait}): the writer's batch, and so every other client of its partition, waits
     * for it meanwhile. A client that took longer takes its messages from the queue for
     * {@link #SLOW_MILLIS} afterwards.
     */
    static final long LIVE_ACK_BOUND_MILLIS = 50;
    static final long SLOW_MILLIS = 1_000;

    /** Shared while a session holds nothing: never written to (see {@link #take}). */
    private static final LinkedHashMap<Long, Held> EMPTY_HELD = new LinkedHashMap<>(1);

    /** A message of {@code device.persisted} this session holds, neither acknowledged nor stored yet. */
    private static final class Held {
        final LiveDeliveries.Offered record;
        final long heldAt;
        final CompletableFuture<Void> settled = new CompletableFuture<>();
        /** Sent on a connection before it was stored; null while not sent. */
        Live sent;
        /** Part of a store under way. */
        boolean storing;

        Held(LiveDeliveries.Offered record, long heldAt) {
            this.record = record;
            this.heldAt = heldAt;
        }
    }

    /** A message in flight that was sent before it was stored: settled by its acknowledgement. */
    final class Live implements OutboundFlow.Origin {
        private final Held held;
        private final ClientConnection conn;
        private int packetId;
        /** Its entry in the queue once a store put it there; 0 before. */
        private long seq;
        private boolean acked;
        private long sentAt;

        Live(Held held, ClientConnection conn) {
            this.held = held;
            this.conn = conn;
        }

        @Override
        public void sent(int packetId) {
            this.packetId = packetId;
            this.sentAt = services.clock().getAsLong();
        }

        @Override
        public void released(int packetId) {
            // QoS 1 only: a message of QoS 2 is stored before it is sent.
        }

        @Override
        public void completed() {
            acked = true;
            acknowledgedAfter(sentAt);
            if (seq > 0) {
                services.deviceQueues().removeSoon(clientId, seq); // stored meanwhile
            } else if (!held.storing) {
                heldMessages.remove(key(held.record));
                live.acknowledged();
                settle(held);
            } // else the store under way removes it when it answers
        }
    }

    private final LiveDeliveries live;
    /**
     * What the writer handed over and is neither acknowledged nor stored, in the order it came. Like
     * the next two, made on first use: most sessions never take a message this way, and an idle
     * session's memory is what limits connections per node.
     */
    private LinkedHashMap<Long, Held> heldMessages = EMPTY_HELD;
    /** The highest offset handed over, per partition of {@code device.persisted}: a batch read again repeats them. */
    private Map<Integer, Long> offeredUpTo;
    /** Held messages not sent; while any is, nothing is sent before it is stored. */
    private int unsent;
    private boolean storing;
    private boolean boundArmed;
    /** Until when (clock) the client counts as slow: its messages are stored first. */
    private long slowUntil;
    private boolean laneRegistered;
    private LiveDeliveries.Lane lane;
    /**
     * How long the client takes to acknowledge a QoS 1 message, smoothed over its last few (clock
     * milliseconds; 0 until one came): a client slower than half the wait takes its messages from
     * the queue, so a fleet of devices on slow links does not hold the writer for the wait at every
     * message.
     */
    private long ackMillis;

    /** An entry of the queue in flight: the queue keeps it until its flow completes. */
    final class Entry implements OutboundFlow.Origin {
        private final long seq;
        private final int qos;
        /** When it went out on this connection (clock); 0 for a resend. */
        private long sentAt;

        Entry(long seq, int qos) {
            this.seq = seq;
            this.qos = qos;
        }

        @Override
        public void sent(int packetId) {
            if (qos == 1) {
                sentAt = services.clock().getAsLong();
                unrecorded.put(seq, packetId);
                if (!flushScheduled) {
                    flushScheduled = true;
                    services.timers().schedule(() -> tell.test(DeviceQueueReader.this::recordPacketIds),
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
                acknowledgedAfter(sentAt);
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
    private final Predicate<Runnable> tell;
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
            Predicate<Runnable> tell, Runnable afterRead) {
        this.clientId = clientId;
        this.services = services;
        this.connection = connection;
        this.outbound = outbound;
        this.tell = tell;
        this.afterRead = afterRead;
        this.live = services.deviceQueues() != null ? services.deviceQueues().live() : null;
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
        active = false;
        // What it held goes to the queue, with the packet identifiers it went out with; like the
        // writes below, before a next connection's read, which waits for what was asked before it.
        storeHeld();
        // Both before a next connection's read, which waits for the writes asked for before it.
        recordPacketIds();
        if (services.deviceQueues() != null) {
            services.deviceQueues().flushWrites(clientId);
        }
        if (tag != null) {
            services.deviceQueues().release(clientId, tag);
            tag = null;
        }
        unregisterIfDone();
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
        return origin instanceof Entry || origin instanceof Live;
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
                tell.test(() -> onRead(conn, max, entries, error)));
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
            services.timers().schedule(() -> tell.test(this::read), 1, TimeUnit.SECONDS);
            afterRead.run();
            return;
        }
        registered = true;
        if (live != null && !laneRegistered && live.enabled()) {
            laneRegistered = true;
            if (lane == null) {
                lane = this::offer;
            }
            live.register(clientId, lane);
        }
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
        queued(q, true);
    }

    /**
     * As {@link #queued(NodeCommand.Queued)}; {@code arrival} is false for an entry this session
     * held and stored itself, whose arrival was counted when it was handed over: the store came
     * later because the client was slow, which must not hold publishers.
     */
    private void queued(NodeCommand.Queued q, boolean arrival) {
        if (!active || !connection.isOnline()) {
            return; // offline: it waits in the queue
        }
        DeliveryBackpressure backpressure = services.backpressure();
        if (arrival && backpressure.enabled() && q.seq() != 0) {
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

    private void acknowledgedAfter(long sentAt) {
        if (sentAt > 0) {
            long took = Math.max(0, services.clock().getAsLong() - sentAt);
            ackMillis = ackMillis == 0 ? took : (3 * ackMillis + took) / 4;
        }
    }

    private static long key(LiveDeliveries.Offered r) {
        return ((long) r.partition() << 48) ^ r.offset();
    }

    /** The writer's side of the lane: runs {@link #take} in a turn of the session. */
    private CompletableFuture<Void> offer(List<LiveDeliveries.Offered> records) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (!tell.test(() -> take(records, done))) {
            live.unregister(clientId, lane); // the session ended: its messages go to Redis directly
            done.completeExceptionally(new IllegalStateException("session of " + clientId + " ended"));
        }
        return done;
    }

    /**
     * Messages handed over by the writer, in order: each goes out at once while the connection keeps
     * up and nothing older waits, else it is stored. {@code done} completes when all are settled.
     */
    private void take(List<LiveDeliveries.Offered> records, CompletableFuture<Void> done) {
        if (heldMessages == EMPTY_HELD) {
            heldMessages = new LinkedHashMap<>();
            offeredUpTo = new HashMap<>(2);
        }
        List<CompletableFuture<Void>> settled = new ArrayList<>(records.size());
        long now = services.clock().getAsLong();
        DeliveryBackpressure backpressure = services.backpressure();
        for (LiveDeliveries.Offered r : records) {
            long key = key(r);
            Held h = heldMessages.get(key);
            if (h != null) {
                settled.add(h.settled); // handed over again: the writer reads a batch again
                continue;
            }
            Long upTo = offeredUpTo.get(r.partition());
            if (upTo != null && r.offset() <= upTo) {
                continue; // handed over before, and settled since
            }
            offeredUpTo.put(r.partition(), r.offset());
            h = new Held(r, now);
            heldMessages.put(key, h);
            live.held(1);
            settled.add(h.settled);
            if (backpressure.enabled()) {
                backpressure.arrived(r.downlink().message(), now);
            }
            if (!sendLive(h, now)) {
                unsent++;
            }
        }
        if (unsent > 0) {
            storeHeld();
        }
        CompletableFuture.allOf(settled.toArray(CompletableFuture[]::new)).whenComplete((x, error) -> {
            if (error != null) {
                done.completeExceptionally(error);
            } else {
                done.complete(null);
            }
        });
    }

    /** Sends a held message at once if it may go before it is stored; false if it must be stored first. */
    private boolean sendLive(Held h, long now) {
        if (!active || !connection.isOnline() || !registered || reading || behind || storing || unsent > 0
                || now < slowUntil || 2 * ackMillis > live.ackWaitMillis() || outbound.room() <= 0
                || !connection.isWritable()) {
            return false;
        }
        Downlink d = h.record.downlink();
        Delivery delivery = Delivery.of(clientId, d.message(), d.matched());
        if (delivery != null && delivery.qos() == 2) {
            return false; // its packet identifier must be in the queue before it goes out
        }
        if (delivery == null) {
            heldMessages.remove(key(h.record)); // not for this client after all
            settle(h);
            return true;
        }
        Live sent = new Live(h, connection.current());
        if (delivery.qos() == 1) {
            h.sent = sent;
        }
        if (!outbound.send(delivery, sent, 0, false) || delivery.qos() == 0) {
            heldMessages.remove(key(h.record)); // delivered at QoS 0, or dropped and counted
            h.sent = null;
            settle(h);
            return true;
        }
        armBound();
        return true;
    }

    private void armBound() {
        if (boundArmed) {
            return;
        }
        boundArmed = true;
        services.timers().schedule(() -> tell.test(this::checkBound), live.ackWaitMillis(), TimeUnit.MILLISECONDS);
    }

    /** Stores what waited too long for its acknowledgement, and the client's next messages for a while. */
    private void checkBound() {
        boundArmed = false;
        long now = services.clock().getAsLong();
        boolean waiting = false;
        for (Held h : heldMessages.values()) {
            if (h.sent != null && !h.storing) {
                if (now - h.heldAt >= live.ackWaitMillis()) {
                    slowUntil = now + SLOW_MILLIS;
                    storeHeld();
                    return;
                }
                waiting = true;
            }
        }
        if (waiting) {
            armBound();
        }
    }

    /**
     * Stores every held message not acknowledged and not being stored, in order, those sent with
     * their packet identifiers; one store at a time, the next when this one answers.
     */
    private void storeHeld() {
        if (storing || heldMessages.isEmpty()) {
            return;
        }
        List<Held> batch = new ArrayList<>(heldMessages.size());
        for (Held h : heldMessages.values()) {
            if (!h.storing && (h.sent == null || !h.sent.acked)) {
                batch.add(h);
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        storing = true;
        List<DeviceQueues.Item> items = new ArrayList<>(batch.size());
        int[] packetIds = new int[batch.size()];
        for (int i = 0; i < batch.size(); i++) {
            Held h = batch.get(i);
            h.storing = true;
            Downlink d = h.record.downlink();
            items.add(new DeviceQueues.Item(d.sourcePartition(), d.sourceOffset(), h.record.encoded()));
            packetIds[i] = h.sent != null ? h.sent.packetId : 0;
        }
        services.deviceQueues().store(clientId, items, packetIds).whenComplete((appends, error) -> {
            if (!tell.test(() -> stored(batch, appends, error))) {
                storedAfterEnd(batch, appends, error);
            }
        });
    }

    /** A store of held messages answered: they are entries of the queue now, or the store is tried again. */
    private void stored(List<Held> batch, DeviceQueues.Appends appends, Throwable error) {
        storing = false;
        if (error != null) {
            // Only when the node stops (a store is retried until Redis takes it): the writer's batch
            // stays uncommitted, and the next owner of its partition queues the messages.
            for (Held h : batch) {
                h.storing = false;
                if (h.sent != null && h.sent.acked) {
                    heldMessages.remove(key(h.record)); // acknowledged while the store was under way
                    live.acknowledged();
                    settle(h);
                }
            }
            if (LOG_LIMIT.allow()) {
                log.warn("{}: storing messages held for the client failed: {}{}", ClientText.of(clientId),
                        error.toString(), LOG_LIMIT.suppressedNote());
            }
            try {
                services.timers().schedule(() -> tell.test(this::storeHeld), 1, TimeUnit.SECONDS);
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                // the node stops: the batch is read again by the next owner
            }
            return;
        }
        if (appends == null) {
            // A delete of the queue made the store moot: the session ended, and these with it.
            for (Held h : batch) {
                heldMessages.remove(key(h.record));
                if (h.sent == null) {
                    unsent--;
                }
                settle(h);
            }
            services.drops().count(MessageDrops.Reason.SESSION_ENDED, batch.size());
            unregisterIfDone();
            return;
        }
        live.stored(batch.size());
        live.notifier().stored(clientId, appends, downlinks(batch));
        List<NodeCommand.Queued> notices = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            Held h = batch.get(i);
            DeviceQueues.Appended a = appends.items().get(i);
            heldMessages.remove(key(h.record));
            for (long n = 0; n < a.dropped(); n++) {
                services.drops().count(MessageDrops.Reason.SESSION_QUEUE_FULL);
            }
            Live sent = h.sent;
            if (sent != null) {
                sent.seq = a.seq();
                if (sent.acked && a.seq() > 0) {
                    services.deviceQueues().removeSoon(clientId, a.seq());
                } else if (a.seq() > 0 && active && connection.is(sent.conn)) {
                    queueSeq = Math.max(queueSeq, a.seq()); // in flight on this connection
                } else if (a.seq() > 0) {
                    // Sent on a connection that ended: the next one gets it from the queue, with DUP.
                    notices.add(new NodeCommand.Queued(clientId, a.seq(), h.record.downlink()));
                }
            } else {
                unsent--;
                notices.add(new NodeCommand.Queued(clientId, a.seq(), h.record.downlink()));
            }
            settle(h);
        }
        for (NodeCommand.Queued q : notices) {
            queued(q, false); // sent as any new entry of the queue, or read
        }
        if (!heldMessages.isEmpty()) {
            storeHeld(); // came while this store was under way
        }
        unregisterIfDone();
    }

    /** A store answered after the session ended: nothing here to update, only the writer to tell. */
    private void storedAfterEnd(List<Held> batch, DeviceQueues.Appends appends, Throwable error) {
        live.unregister(clientId, lane);
        if (error != null) {
            return; // the writer's batch stays uncommitted and is queued again
        }
        if (appends != null) {
            live.stored(batch.size());
            live.notifier().stored(clientId, appends, downlinks(batch));
        }
        for (Held h : batch) {
            settle(h);
        }
    }

    private static List<Downlink> downlinks(List<Held> batch) {
        List<Downlink> out = new ArrayList<>(batch.size());
        for (Held h : batch) {
            out.add(h.record.downlink());
        }
        return out;
    }

    private void settle(Held h) {
        if (h.settled.complete(null)) {
            live.held(-1);
        }
    }

    /** Without a connection and with nothing held, the writer stores the client's messages itself again. */
    private void unregisterIfDone() {
        if (laneRegistered && !active && heldMessages.isEmpty()) {
            laneRegistered = false;
            live.unregister(clientId, lane);
        }
    }

    /** The session ended: its queue goes, and what it still held is counted. */
    void deleteQueue() {
        if (!heldMessages.isEmpty()) {
            // Neither sent nor stored, or sent and not acknowledged: they end with the session. A store
            // under way is made moot by the delete, and counts its own when it answers.
            int ended = 0;
            for (Held h : new ArrayList<>(heldMessages.values())) {
                if (!h.storing) {
                    heldMessages.remove(key(h.record));
                    if (h.sent == null) {
                        unsent--;
                    }
                    ended++;
                    settle(h);
                }
            }
            services.drops().count(MessageDrops.Reason.SESSION_ENDED, ended);
        }
        unregisterIfDone();
        if (services.deviceQueues() != null) {
            // Retried until Redis takes it; this client's next read of its queue waits for it.
            services.deviceQueues().delete(clientId)
                    .thenAccept(held -> services.drops().count(MessageDrops.Reason.SESSION_ENDED, held));
        }
    }
}
