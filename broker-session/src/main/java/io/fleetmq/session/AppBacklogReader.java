package io.fleetmq.session;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.log.LogLimit;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.kafka.app.AppBacklog;
import io.fleetmq.session.AppBacklogStore.Reader;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivery from the backlogs of a persistent APPLICATION session while it is connected: its own
 * and those of its shared subscriptions. Records are read as credit allows, sent as the client's
 * receive window allows, and committed once delivered; what was not is read again by the next
 * reader.
 */
final class AppBacklogReader {

    private static final Logger log = LoggerFactory.getLogger(AppBacklogReader.class);

    /** Shared by every client: a storm of failures costs a few lines, see {@link LogLimit}. */
    private static final LogLimit LOG_LIMIT = new LogLimit(20, java.time.Duration.ofSeconds(10));

    /** One partition of a backlog as this session delivers it. */
    private static final class Cursor {
        final Reader backlog;
        final int partition;
        /** Offsets handed to this session and not yet delivered (sent at QoS 0, acknowledged at 1/2). */
        final TreeSet<Long> open = new TreeSet<>();
        /** The offset after the highest one handed over. */
        long next = -1;
        long lastSent = -1;
        long committed = -1;

        Cursor(Reader backlog, int partition) {
            this.backlog = backlog;
            this.partition = partition;
        }
    }

    /** A backlog record in flight: the backlog delivers it again until it is committed. */
    final class Offset implements OutboundFlow.Origin {
        private final Cursor cursor;
        private final long offset;

        private Offset(Cursor cursor, long offset) {
            this.cursor = cursor;
            this.offset = offset;
        }

        @Override
        public void sent(int packetId) {
        }

        @Override
        public void released(int packetId) {
        }

        @Override
        public void completed() {
            done(cursor, offset);
        }
    }

    private record Waiting(Reader from, AppBacklog.Record record) {
    }

    private final String clientId;
    private final SessionServices services;
    private final Connection connection;
    private final OutboundFlow outbound;
    private final Consumer<Runnable> tell;
    /** What is read while backlogs are open; null otherwise, which is every DEVICE session. */
    private Reading reading;

    /** The backlogs read for one connection, and where delivery stands in each. */
    private static final class Reading {
        /** The client's own backlog. */
        Reader own;
        /** The backlogs of its shared subscriptions, by the filter as subscribed ({@code $share/g/f}). */
        final Map<String, Reader> shared = new HashMap<>();
        /** The subscription each shared backlog is read for. */
        final Map<Reader, Subscription> sharedSubscriptions = new HashMap<>();
        /** Where delivery stands in each partition read, per backlog. */
        final Map<Reader, Map<Integer, Cursor>> cursors = new HashMap<>();
        /** Backlog records waiting for room in the client's receive window, in the order they came. */
        final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    }

    private Reading reading() {
        if (reading == null) {
            reading = new Reading();
        }
        return reading;
    }

    AppBacklogReader(String clientId, SessionServices services, Connection connection, OutboundFlow outbound,
            Consumer<Runnable> tell) {
        this.clientId = clientId;
        this.services = services;
        this.connection = connection;
        this.outbound = outbound;
        this.tell = tell;
    }

    /** Whether {@code origin} is a backlog record. */
    static boolean isRecord(OutboundFlow.Origin origin) {
        return origin instanceof Offset;
    }

    /** Starts reading the client's own backlog and those of its shared subscriptions. */
    void open(boolean newSession, Map<String, Subscription> subscriptions) {
        Reader[] opened = new Reader[1];
        opened[0] = services.appBacklogs().open(clientId, batch -> tell.accept(() -> onRecords(opened[0], batch)),
                newSession);
        reading().own = opened[0];
        opened[0].grant(connection.receiveMaximum());
        for (Map.Entry<String, Subscription> e : subscriptions.entrySet()) {
            if (e.getValue().isShared()) {
                openShared(e.getKey(), e.getValue());
            }
        }
    }

    /** Whether the shared subscription's backlog exists, so that it can be subscribed to. */
    boolean sharedKnown(String group, String filter) {
        return services.appBacklogs().sharedKnown(group, filter);
    }

    /** A shared subscription was made or changed ({@code rawFilter} as subscribed, {@code $share/g/f}). */
    void subscribed(String rawFilter, Subscription sub) {
        Reader known = reading == null ? null : reading.shared.get(rawFilter);
        if (known != null) {
            reading.sharedSubscriptions.put(known, sub); // the same subscription with new options
        } else {
            openShared(rawFilter, sub);
        }
    }

    /** Joins the readers of a shared subscription's backlog (the session is connected). */
    private void openShared(String rawFilter, Subscription sub) {
        Reader[] opened = new Reader[1];
        opened[0] = services.appBacklogs().openShared(sub.shareGroup(), sub.topicFilter(),
                batch -> tell.accept(() -> onRecords(opened[0], batch)),
                partitions -> tell.accept(() -> onRevoked(opened[0], partitions)));
        Reading r = reading();
        r.shared.put(rawFilter, opened[0]);
        r.sharedSubscriptions.put(opened[0], sub);
        opened[0].grant(connection.receiveMaximum());
    }

    /** A subscription went: if it was a shared one, this session stops reading its backlog. */
    void unsubscribed(String rawFilter) {
        Reader b = reading == null ? null : reading.shared.remove(rawFilter);
        if (b != null) {
            reading.sharedSubscriptions.remove(b);
            reading.cursors.remove(b);
            reading.waiting.removeIf(w -> w.from() == b);
            b.close();
        }
    }

    private void onRecords(Reader from, List<AppBacklog.Record> batch) {
        Reading current = reading;
        if (current == null || from != current.own && !current.sharedSubscriptions.containsKey(from)
                || !connection.isOnline()) {
            return; // an earlier connection's or subscription's; what it read is read again from the committed offset
        }
        for (AppBacklog.Record r : batch) {
            current.waiting.add(new Waiting(from, r));
        }
        outbound.sendQueued();
        drain();
    }

    /** Sends backlog records while the receive window has room. */
    void drain() {
        // A delivery can end the connection, and close() drops what is read: look again each time.
        while (reading != null && connection.isWritable() && !reading.waiting.isEmpty() && outbound.room() > 0) {
            Waiting w = reading.waiting.poll();
            deliver(reading, w.from(), w.record());
        }
    }

    private void deliver(Reading current, Reader from, AppBacklog.Record r) {
        Cursor cursor = current.cursors.computeIfAbsent(from, b -> new HashMap<>())
                .computeIfAbsent(r.partition(), p -> new Cursor(from, p));
        cursor.next = Math.max(cursor.next, r.offset() + 1);
        cursor.open.add(r.offset());
        Delivery d;
        try {
            Downlink downlink = ClusterCodec.decodeDownlink(r.value());
            Subscription sharedSub = current.sharedSubscriptions.get(from);
            // A shared backlog holds the group's messages; this member gets them with its own options.
            d = Delivery.of(clientId, downlink.message(), sharedSub != null ? List.of(sharedSub) : downlink.matched());
        } catch (MessageFormatException e) {
            if (LOG_LIMIT.allow()) {
                log.warn("{}: skipping a malformed backlog record at {}/{}: {}{}",
                        ClientText.of(clientId), r.partition(), r.offset(),
                        e.getMessage(), LOG_LIMIT.suppressedNote());
            }
            services.drops().count(MessageDrops.Reason.MALFORMED_RECORD, clientId, null);
            d = null;
        }
        boolean sent = d != null && outbound.send(d, new Offset(cursor, d.qos() > 0 ? r.offset() : -1), 0,
                r.redelivery());
        if (sent) {
            cursor.lastSent = Math.max(cursor.lastSent, r.offset());
        }
        if (!sent || d.qos() == 0) {
            done(cursor, r.offset()); // delivered (QoS 0 is once sent), or dropped and counted
        }
    }

    /** A backlog record is delivered: commit up to the first one that is not, and ask for one more. */
    private void done(Cursor cursor, long offset) {
        if (reading == null || reading.cursors.getOrDefault(cursor.backlog, Map.of()).get(cursor.partition) != cursor
                || !cursor.open.remove(offset)) {
            return; // its partition went to another member, or its backlog was closed
        }
        long commit = cursor.open.isEmpty() ? cursor.next : cursor.open.first();
        if (commit > cursor.committed) {
            cursor.committed = commit;
            cursor.backlog.commit(cursor.partition, commit, cursor.lastSent);
        }
        cursor.backlog.grant(1);
    }

    /**
     * A shared backlog's partitions went to another member. Records of them not yet acknowledged
     * are that member's to deliver; credit they held comes back to this reader.
     */
    private void onRevoked(Reader from, Set<Integer> partitions) {
        if (reading == null) {
            return; // closed: nothing of it is held here
        }
        Map<Integer, Cursor> mine = reading.cursors.get(from);
        int freed = 0;
        if (mine != null) {
            for (Integer p : partitions) {
                Cursor c = mine.remove(p);
                if (c != null) {
                    freed += c.open.size();
                }
            }
        }
        ArrayDeque<Waiting> waiting = reading.waiting;
        int before = waiting.size();
        waiting.removeIf(w -> w.from() == from && partitions.contains(w.record().partition()));
        freed += before - waiting.size();
        if (freed > 0) {
            from.grant(freed);
        }
    }

    /** Stops reading every backlog; what they handed over and was not delivered is read again from Kafka. */
    void close() {
        Reading closing = reading;
        if (closing == null) {
            return;
        }
        reading = null;
        if (closing.own != null) {
            closing.own.close();
        }
        closing.shared.values().forEach(Reader::close);
    }
}
