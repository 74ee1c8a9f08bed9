package io.fleetmq.kafka.app;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.KafkaClients;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import io.fleetmq.kafka.supervise.LoopSupervisor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a backlog in Kafka for one connected APPLICATION session, on a thread of its own, and hands
 * records to the session as it asks for them ({@link #grant}): a client that does not keep up makes
 * its backlog wait in Kafka, not in the broker's heap. Either the client's own backlog topic (one
 * partition, read from the offset committed for the client), or the backlog of a shared
 * subscription, read as one member of the subscription's consumer group: Kafka gives each member
 * some of the partitions, so another member adds throughput, and a member leaving hands its
 * partitions to the others.
 *
 * <p>The session commits ({@link #commit}) only offsets below which every record was delivered:
 * acknowledged at QoS 1/2, sent at QoS 0. The commit also records the highest offset ever sent, so
 * records up to it are marked as redeliveries (DUP) when they are read again. When a shared member
 * loses partitions, what the session asked to commit so far is committed first; records of those
 * partitions that were sent and not yet acknowledged go to the partitions' new reader again.
 *
 * <p>Repeats are skipped. The node routing a {@code publish} partition may write a message to the
 * backlog twice: it routes its batch again when a write failed, and a node taking a partition over
 * routes again what the previous owner had not committed. Those repeats are exactly the messages of
 * a {@code publish} partition at or below the highest offset (and part) already written for it, so
 * the reader keeps that highest source position per publish partition and skips what is not above
 * it, as the DEVICE queues do in Redis. The positions of the records below the committed offset go
 * into the commit's metadata ({@link Position}), so a reader started later, on any node, knows them
 * too: a repeat may sit after the committed offset while its original sat before it.
 */
public final class AppBacklog implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AppBacklog.class);

    /** One record for the session; {@code redelivery} if it was sent to a client before. */
    public record Record(int partition, long offset, byte[] value, boolean redelivery) {
    }

    private final KafkaClients clients;
    private final String topic;
    private final TopicPartition partition;
    private final String groupId;
    private final Consumer<List<Record>> sink;
    /** Null for a client's own backlog; for a shared one, told of partitions this member lost. */
    private final Consumer<Set<Integer>> revoked;
    /**
     * Commits asked for and not yet made, the latest per partition: a session that acknowledges
     * many records while one commit is under way costs one more commit, not one per record, and the
     * position a reconnecting client reads elsewhere is never far behind.
     */
    private final ConcurrentHashMap<Integer, long[]> requests = new ConcurrentHashMap<>();
    private final Object credit = new Object();
    private int credits;
    private volatile boolean stopping;
    private volatile KafkaConsumer<String, byte[]> consumer;
    /** Records of the backlog not handed to the session yet, as of the last poll: Kafka's lag plus the buffer. */
    private volatile long lag;
    private Runnable onClose = () -> { };
    private Thread thread;
    /** Per partition: the highest offset ever sent (from the committed metadata), and the last commit. */
    private final Map<Integer, Long> lastSentBefore = new HashMap<>();
    private final Map<Integer, Long> lastCommitted = new HashMap<>();
    private final ArrayDeque<Record> buffer = new ArrayDeque<>();
    /** Per backlog partition: the highest source position per publish partition read so far. */
    private final Map<Integer, Map<Integer, Downlink.Source>> seen = new HashMap<>();
    /** Per backlog partition: the same, for the records below the committed offset only. */
    private final Map<Integer, Map<Integer, Downlink.Source>> committedSeen = new HashMap<>();
    /** Per backlog partition: (backlog offset, source) of records read and not yet below a commit. */
    private final Map<Integer, ArrayDeque<Map.Entry<Long, Downlink.Source>>> uncommittedSources = new HashMap<>();
    /** A commit waits for a rebalance to finish: poll, even with records still buffered. */
    private boolean rebalancing;
    private final long startAtMillis;
    private LoopSupervisor supervisor;
    /** A client's own backlog: the offset after the last record read into the buffer; -1 before the first. */
    private long ownNext = -1;

    /**
     * A client's own backlog.
     *
     * @param sink called on the backlog's thread with records, never more than granted; it should
     *             hand them to the session's mailbox
     */
    public AppBacklog(KafkaClients clients, String topic, String groupId, Consumer<List<Record>> sink,
            long startAtMillis) {
        this(clients, topic, groupId, sink, startAtMillis, null);
    }

    private AppBacklog(KafkaClients clients, String topic, String groupId, Consumer<List<Record>> sink,
            long startAtMillis, Consumer<Set<Integer>> revoked) {
        this.startAtMillis = startAtMillis;
        this.clients = clients;
        this.topic = topic;
        this.partition = new TopicPartition(topic, 0);
        this.groupId = groupId;
        this.sink = sink;
        this.revoked = revoked;
    }

    /**
     * One member's reader of a shared subscription's backlog: consumer group {@code topic}.
     *
     * @param revoked called on the backlog's thread with the partitions this member no longer reads
     */
    public static AppBacklog sharedMember(KafkaClients clients, String topic, Consumer<List<Record>> sink,
            Consumer<Set<Integer>> revoked) {
        return new AppBacklog(clients, topic, topic, sink, -1, java.util.Objects.requireNonNull(revoked));
    }

    public void start() {
        if (supervisor == null) {
            supervisor = new LoopSupervisor(new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
                    LoopSupervisor.Policy.defaults());
        }
        thread = new Thread(this::run, "fleetmq-app-" + topic);
        thread.setDaemon(true);
        thread.start();
    }

    /** Restarts the reader after an unexpected failure; set before {@link #start()}. */
    /**
     * Records of this backlog the session has not been handed yet, as of the backlog's last poll
     * (Kafka's lag of the partitions it reads, plus those read and waiting for the session's credit).
     */
    public long lag() {
        return lag;
    }

    private long kafkaLag() {
        long sum = 0;
        for (org.apache.kafka.common.TopicPartition tp : consumer.assignment()) {
            sum += consumer.currentLag(tp).orElse(0);
        }
        return sum;
    }

    /** Runs {@code action} when the backlog is closed (its owner's bookkeeping). */
    AppBacklog onClose(Runnable action) {
        this.onClose = action;
        return this;
    }

    AppBacklog supervisedBy(LoopSupervisor s) {
        this.supervisor = s;
        return this;
    }

    /** The session can take {@code n} more records. */
    public void grant(int n) {
        synchronized (credit) {
            credits += n;
            credit.notifyAll();
        }
    }

    /**
     * Every record below {@code nextOffset} was delivered; {@code lastSent} is the highest offset
     * ever sent to the client.
     */
    public void commit(int partitionNumber, long nextOffset, long lastSent) {
        requests.merge(partitionNumber, new long[] {nextOffset, lastSent},
                (a, b) -> new long[] {Math.max(a[0], b[0]), Math.max(a[1], b[1])});
        wake();
    }

    /**
     * Gets the thread out of its wait or poll at once: a commit must not wait for the next poll,
     * since a client that comes back on another node reads the committed offset right away.
     */
    private void wake() {
        synchronized (credit) {
            credit.notifyAll();
        }
        KafkaConsumer<String, byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }

    private void run() {
        // One label for every backlog: a label per client would make a meter per client.
        supervisor.runForOneClient("app-backlog", () -> stopping, this::read);
    }

    /**
     * One consumer's life. After a failure the next one reads a client's own backlog on from what the
     * last one read (what it buffered stays buffered); a shared member rejoins the group, which is
     * a rebalance like any other: its partitions' unacknowledged records come again, marked as sent before.
     */
    private void read(LoopSupervisor.Progress made) throws InterruptedException {
        try {
            // A member on a node that died holds its partitions until the session timeout: 10 s,
            // well above the 6 s Kafka brokers accept at least by default.
            // Cooperative rebalancing: a member joining or leaving moves only the partitions that
            // change hands; the others keep their reader, and what it has in flight.
            consumer = clients.consumer("app", groupId, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500,
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000,
                    ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 2_500,
                    ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName()));
            if (revoked == null && ownNext >= 0) {
                consumer.assign(List.of(partition));
                consumer.seek(partition, ownNext);
            } else if (revoked == null) {
                startOwn();
            } else {
                consumer.subscribe(List.of(topic), new Members());
            }
            while (!stopping) {
                try {
                    runRequests();
                } catch (WakeupException e) {
                    continue; // from the rebalance listener's commit inside a poll: look again
                }
                int take;
                synchronized (credit) {
                    take = Math.min(credits, buffer.size());
                    credits -= take;
                }
                if (take > 0) {
                    List<Record> batch = new ArrayList<>(take);
                    for (int i = 0; i < take; i++) {
                        batch.add(buffer.poll());
                    }
                    sink.accept(batch);
                    continue;
                }
                if (buffer.isEmpty() || rebalancing) {
                    Duration wait = buffer.isEmpty() ? Duration.ofMillis(100) : Duration.ofMillis(10);
                    rebalancing = false;
                    try {
                        for (ConsumerRecord<String, byte[]> rec : consumer.poll(wait)) {
                            if (rec.value() != null && !repeat(rec.partition(), rec.offset(), rec.value())) {
                                buffer.add(new Record(rec.partition(), rec.offset(), rec.value(),
                                        rec.offset() <= lastSentBefore.getOrDefault(rec.partition(), -1L)));
                            }
                            if (revoked == null) {
                                ownNext = rec.offset() + 1;
                            }
                        }
                        lag = buffer.size() + kafkaLag();
                        made.made();
                    } catch (WakeupException e) {
                        continue; // a commit or close asked for the thread
                    }
                } else {
                    synchronized (credit) {
                        if (credits == 0 && (requests.isEmpty() || rebalancing) && !stopping) {
                            credit.wait(200);
                        }
                    }
                }
            }
        } catch (WakeupException e) {
            if (!stopping) {
                throw e; // meant for a poll, and yet it ended the loop: the supervisor starts it again
            }
        } finally {
            try {
                runRequests();
            } catch (RuntimeException e) {
                log.warn("Final commit of {} failed: {}", topic, e.toString());
            }
            KafkaConsumer<String, byte[]> c = consumer;
            if (c != null) {
                try {
                    // A shared member's rebalance listener runs inside close and uses the consumer.
                    c.close(CloseOptions.timeout(clients.settings().requestTimeout()));
                } catch (RuntimeException e) {
                    log.warn("Closing the reader of {} failed: {}", topic, e.toString());
                } finally {
                    consumer = null;
                }
            }
        }
    }

    /** A client's own backlog: one partition, from the committed offset, or from the session's start. */
    private void startOwn() {
        consumer.assign(List.of(partition));
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.of(partition),
                clients.settings().requestTimeout());
        OffsetAndMetadata at = committed.get(partition);
        if (startAtMillis >= 0) {
            // A new session: start where its time starts, whatever an earlier one left behind. The end
            // is taken before the search: with nothing of the session's time in the topic yet, its
            // first records may be appended while the search runs, and an end looked up after it
            // (seekToEnd) would start past them.
            long end = consumer.endOffsets(Set.of(partition), clients.settings().requestTimeout()).get(partition);
            var found = consumer.offsetsForTimes(Map.of(partition, startAtMillis), clients.settings().requestTimeout())
                    .get(partition);
            consumer.seek(partition, found != null ? found.offset() : end);
            consumer.position(partition, clients.settings().requestTimeout());
        } else if (at != null) {
            consumer.seek(partition, at.offset());
            remember(0, at);
        } else {
            consumer.seekToBeginning(List.of(partition));
        }
        log.info("Reading backlog {} from offset {} (sent before up to {})", topic,
                consumer.position(partition, clients.settings().requestTimeout()), lastSentBefore.get(0));
    }

    private void remember(int partitionNumber, OffsetAndMetadata at) {
        lastCommitted.put(partitionNumber, at.offset());
        Position position = Position.parse(at.metadata());
        if (position.lastSent() >= 0) {
            lastSentBefore.put(partitionNumber, position.lastSent());
        }
        committedSeen.put(partitionNumber, new HashMap<>(position.seen()));
        seen.put(partitionNumber, new HashMap<>(position.seen()));
        uncommittedSources.remove(partitionNumber);
    }

    /**
     * Whether the record repeats a message already read from this backlog partition: its source
     * position is not above the highest one read for its publish partition. A record that is not a
     * downlink record is no repeat; the session decides what to do with it.
     */
    private boolean repeat(int partitionNumber, long offset, byte[] value) {
        Downlink.Source source;
        try {
            source = ClusterCodec.downlinkSource(value);
        } catch (MessageFormatException e) {
            return false;
        }
        Map<Integer, Downlink.Source> highest = seen.computeIfAbsent(partitionNumber, p -> new HashMap<>());
        Downlink.Source before = highest.get(source.partition());
        if (before != null && !source.after(before.offset(), before.part())) {
            log.debug("Skipping repeat of publish {}/{} at {} offset {}", source.partition(), source.offset(), topic,
                    offset);
            return true;
        }
        highest.put(source.partition(), source);
        uncommittedSources.computeIfAbsent(partitionNumber, p -> new ArrayDeque<>())
                .add(Map.entry(offset, source));
        return false;
    }

    /** The source positions of the records below {@code nextOffset}: what a commit there covers. */
    private Map<Integer, Downlink.Source> seenBelow(int partitionNumber, long nextOffset) {
        Map<Integer, Downlink.Source> below = new HashMap<>(committedSeen.getOrDefault(partitionNumber, Map.of()));
        for (Map.Entry<Long, Downlink.Source> e : uncommittedSources.getOrDefault(partitionNumber, new ArrayDeque<>())) {
            if (e.getKey() >= nextOffset) {
                break; // in offset order
            }
            below.merge(e.getValue().partition(), e.getValue(),
                    (a, b) -> b.after(a.offset(), a.part()) ? b : a);
        }
        return below;
    }

    /** A commit at {@code nextOffset} is made: what it covers is now known to later readers. */
    private void committedAt(int partitionNumber, long nextOffset, Map<Integer, Downlink.Source> below) {
        committedSeen.put(partitionNumber, below);
        ArrayDeque<Map.Entry<Long, Downlink.Source>> q = uncommittedSources.get(partitionNumber);
        while (q != null && !q.isEmpty() && q.peekFirst().getKey() < nextOffset) {
            q.pollFirst();
        }
    }

    /**
     * What a commit's metadata holds: the highest offset ever sent to the client (records up to it
     * are redeliveries), and per publish partition the highest source position below the committed
     * offset. Written as {@code lastSent=<n>;seen=<p>:<offset>[.<part>],...} with numbers in base 36:
     * Kafka keeps at most {@code offset.metadata.max.bytes} (4096 by default) per commit, which this
     * fits for some 250 publish partitions; beyond {@link #MAX_METADATA_CHARS} the positions are left
     * out (a restart may then let repeats through, but the commit never fails for it).
     */
    record Position(long lastSent, Map<Integer, Downlink.Source> seen) {

        static final int MAX_METADATA_CHARS = 4_000;

        String format() {
            StringBuilder b = new StringBuilder("lastSent=").append(lastSent);
            if (!seen.isEmpty()) {
                StringBuilder positions = new StringBuilder(";seen=");
                boolean first = true;
                for (Downlink.Source s : seen.values()) {
                    if (!first) {
                        positions.append(',');
                    }
                    first = false;
                    positions.append(Integer.toString(s.partition(), 36)).append(':')
                            .append(Long.toString(s.offset(), 36));
                    if (s.part() > 0) {
                        positions.append('.').append(Integer.toString(s.part(), 36));
                    }
                }
                if (b.length() + positions.length() <= MAX_METADATA_CHARS) {
                    b.append(positions);
                }
            }
            return b.toString();
        }

        /** Reads what {@link #format} wrote, or an older {@code lastSent=<n>}; anything else is no position. */
        static Position parse(String metadata) {
            long lastSent = -1;
            Map<Integer, Downlink.Source> seen = new HashMap<>();
            if (metadata == null) {
                return new Position(lastSent, seen);
            }
            try {
                for (String field : metadata.split(";")) {
                    if (field.startsWith("lastSent=")) {
                        lastSent = Long.parseLong(field.substring("lastSent=".length()));
                    } else if (field.startsWith("seen=") && field.length() > "seen=".length()) {
                        for (String entry : field.substring("seen=".length()).split(",")) {
                            int colon = entry.indexOf(':');
                            int dot = entry.indexOf('.', colon);
                            int partition = Integer.parseInt(entry.substring(0, colon), 36);
                            long offset = Long.parseLong(entry.substring(colon + 1, dot < 0 ? entry.length() : dot), 36);
                            int part = dot < 0 ? 0 : Integer.parseInt(entry.substring(dot + 1), 36);
                            seen.put(partition, new Downlink.Source(partition, offset, part));
                        }
                    }
                }
            } catch (RuntimeException e) {
                log.warn("Ignoring unreadable backlog commit metadata '{}': {}", metadata, e.toString());
                return new Position(lastSent, Map.of());
            }
            return new Position(lastSent, seen);
        }
    }

    /** A shared member's share of the partitions; runs on the backlog's thread, inside poll. */
    private final class Members implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new HashSet<>(partitions),
                    clients.settings().requestTimeout());
            committed.forEach((tp, at) -> {
                if (at != null) {
                    remember(tp.partition(), at);
                }
            });
            log.info("Reading partitions {} of shared backlog {}", partitions, topic);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            runRequests(); // what the session counted as delivered, before the partitions move
            gone(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            gone(partitions);
        }

        private void gone(Collection<TopicPartition> partitions) {
            Set<Integer> numbers = new HashSet<>();
            for (TopicPartition tp : partitions) {
                numbers.add(tp.partition());
                lastCommitted.remove(tp.partition());
                lastSentBefore.remove(tp.partition());
                seen.remove(tp.partition());
                committedSeen.remove(tp.partition());
                uncommittedSources.remove(tp.partition());
            }
            buffer.removeIf(r -> numbers.contains(r.partition()));
            revoked.accept(numbers);
        }
    }

    private void again(Map<Integer, long[]> taken) {
        taken.forEach((p, r) -> requests.merge(p, r,
                (a, b) -> new long[] {Math.max(a[0], b[0]), Math.max(a[1], b[1])}));
    }

    /** Makes the commits asked for, in one request; a wakeup meant for a poll only makes it run again. */
    private void runRequests() {
        while (!requests.isEmpty()) {
            Map<Integer, long[]> taken = new HashMap<>();
            for (Integer p : List.copyOf(requests.keySet())) {
                long[] r = requests.remove(p);
                if (r != null) {
                    taken.put(p, r);
                }
            }
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            Map<Integer, Map<Integer, Downlink.Source>> covered = new HashMap<>();
            taken.forEach((p, r) -> {
                TopicPartition tp = new TopicPartition(topic, p);
                if (revoked != null && !consumer.assignment().contains(tp)) {
                    return; // no longer ours: its new reader delivers what was not acknowledged
                }
                if (r[0] > lastCommitted.getOrDefault(p, -1L) || r[1] > lastSentBefore.getOrDefault(p, -1L)) {
                    Map<Integer, Downlink.Source> below = seenBelow(p, r[0]);
                    covered.put(p, below);
                    offsets.put(tp, new OffsetAndMetadata(r[0], new Position(r[1], below).format()));
                }
            });
            if (offsets.isEmpty()) {
                continue;
            }
            try {
                while (true) {
                    try {
                        consumer.commitSync(offsets, clients.settings().requestTimeout());
                        break;
                    } catch (WakeupException e) {
                        // Meant for a poll (another commit was asked for meanwhile): the flag is cleared, commit again.
                    }
                }
            } catch (RebalanceInProgressException e) {
                // Members are joining or leaving: the next poll takes part in that, then this is retried.
                again(taken);
                rebalancing = true;
                return;
            } catch (RuntimeException e) {
                again(taken); // so the final attempt on close still has them
                throw e;
            }
            offsets.forEach((tp, at) -> {
                lastCommitted.put(tp.partition(), at.offset());
                long sent = Position.parse(at.metadata()).lastSent();
                lastSentBefore.merge(tp.partition(), sent, Math::max);
                committedAt(tp.partition(), at.offset(), covered.get(tp.partition()));
            });
        }
    }

    /**
     * Stops reading; the backlog's thread makes the commits asked for so far, then ends. Does not
     * wait for it, so a session may call it on its own turn.
     */
    @Override
    public void close() {
        stopping = true;
        onClose.run();
        wake();
    }
}
