package io.fleetmq.session.cluster;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.session.DeliveryBackpressure;
import io.fleetmq.session.LiveDeliveries;
import io.fleetmq.session.MessageDrops;
import io.fleetmq.session.QueueReaderTag;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves messages for persistent DEVICE sessions from {@code device.persisted} into their queues in
 * Redis (DESIGN.md, "The publish path", step 4), and tells the node where the client is connected
 * that its queue grew. Runs on the {@code device.persisted} consumer thread of every node (one
 * consumer group), so each client's messages are queued by one node at a time, in order.
 *
 * <p>Offsets are committed only once Redis stored the batch; while Redis is away the batch is read
 * again and again, and the queues' deduplication by source position makes that safe. A client's
 * messages of a batch are written in order, each chunk after the one before it is stored, so a
 * write that fails never lets a later message of the same client in before it.
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
    private final String nodeId;
    private final Consumer<NodeCommand> localCommands;
    /** Tells overload backpressure what the writer works on: a Redis write can stall with nothing arriving. */
    private final DeliveryBackpressure.Stage stage;
    /** Most messages, and bytes, in one append script. */
    static final int CHUNK_MESSAGES = 128;
    static final long CHUNK_BYTES = 4L << 20;

    /** While Redis is away every batch fails, twice a second: a line now and then. */
    private final io.fleetmq.core.log.LogLimit failureLog = new io.fleetmq.core.log.LogLimit(1, Duration.ofSeconds(30));
    private final List<CompletableFuture<?>> inFlight = new ArrayList<>();
    /** From receipt to storage in Redis of the oldest message of each batch; null until {@link #meters} is called. */
    private BatchDelay writeDelay;
    /** Sessions connected here that take their messages before they are stored; null for none. */
    private LiveDeliveries live;
    private long liveFreshMillis;
    /** The batch's messages per client, in order, written at {@link #flushed()}. */
    private final Map<String, List<Read>> batch = new LinkedHashMap<>();
    /** Clients of the batch under way whose messages went to Redis (not to a lane). */
    private final java.util.Set<String> appendedNow = new java.util.HashSet<>();
    /**
     * Clients whose appends were under way when a batch failed: some may be stored although the
     * answer never came. Until a batch is stored whole, their messages go to Redis again, whose
     * deduplication by source position recognises those, even once they are connected here; a lane
     * would send them a second time. Lanes recognise what they were offered before by themselves.
     */
    private final java.util.Set<String> redisFirst = new java.util.HashSet<>();

    /** A record of the batch and where in {@code device.persisted} it was read (a lane recognises it read again). */
    private record Read(Stored record, int partition, long offset) {
    }

    /**
     * @param nodeId        this node: a client connected here is told directly, not through Kafka
     * @param localCommands where a command for a session of this node goes (as from its node topic)
     */
    public DeviceQueueWriter(DeviceQueues queues, SessionDirectory directory, Membership membership,
            ClusterProducer producer, BrokerTopics topics, MessageDrops drops, Duration timeout, String nodeId,
            Consumer<NodeCommand> localCommands) {
        this(queues, directory, membership, producer, topics, drops, timeout, nodeId, localCommands,
                DeliveryBackpressure.OFF);
    }

    /** @param backpressure held up by the writes while one stalls (see {@link DeliveryBackpressure.Stage}) */
    public DeviceQueueWriter(DeviceQueues queues, SessionDirectory directory, Membership membership,
            ClusterProducer producer, BrokerTopics topics, MessageDrops drops, Duration timeout, String nodeId,
            Consumer<NodeCommand> localCommands, DeliveryBackpressure backpressure) {
        this.stage = backpressure.stage();
        this.nodeId = nodeId;
        this.localCommands = localCommands;
        this.queues = queues;
        this.directory = directory;
        this.membership = membership;
        this.producer = producer;
        this.topics = topics;
        this.drops = drops;
        this.timeout = timeout;
    }

    /**
     * Hands the messages of clients connected to this node to their sessions before storing them
     * (see {@link LiveDeliveries}); the entries the sessions store are announced to readers on other
     * nodes as the writer's own are. Only messages received within {@code freshFor}: older ones are
     * what a node reads again after it took a partition over from one that died, and go to Redis
     * first, whose deduplication by source position keeps those stored before from going out twice.
     */
    public void live(LiveDeliveries live, Duration freshFor) {
        this.live = live;
        this.liveFreshMillis = freshFor.toMillis();
        if (live != null) {
            live.notifier(this::storedByLane);
        }
    }

    private void storedByLane(String clientId, DeviceQueues.Appends appends, List<Downlink> downlinks) {
        List<Map.Entry<String, Long>> readers = readers(clientId, appends.reader());
        readers.removeIf(r -> r.getKey().equals(nodeId) && r.getValue() == membership.incarnation());
        if (readers.isEmpty()) {
            return; // the session here saw to its own entries
        }
        for (int i = 0; i < appends.items().size(); i++) {
            DeviceQueues.Appended a = appends.items().get(i);
            tell(readers, clientId, a.duplicate() ? 0 : a.seq(), downlinks.get(i));
        }
    }

    /** Registers the writer's meter, {@code fleetmq.device.queue.write.delay}. */
    public void meters(io.micrometer.core.instrument.MeterRegistry meters) {
        this.writeDelay = new BatchDelay(meters, "fleetmq.device.queue.write.delay",
                "From the receipt of a message to its storage in a DEVICE queue in Redis: the oldest message of each"
                        + " batch of device.persisted this node wrote, once per batch");
    }

    /**
     * A record of {@code device.persisted} as read: the message for the client it is keyed by, and
     * the bytes it came in, which are the queue entry as they are (encoding it again would give the
     * same bytes, at a cost per message).
     */
    public record Stored(Downlink downlink, byte[] encoded) {

        public static Stored decode(byte[] value) throws MessageFormatException {
            return new Stored(ClusterCodec.decodeDownlink(value), value);
        }
    }

    /** One record of {@code device.persisted}: a message for the client the record is keyed by. */
    public void handle(Stored record, int partition, long offset) {
        Downlink d = record.downlink();
        if (d.matched().isEmpty()) {
            return;
        }
        stage.working(d.message());
        if (writeDelay != null) {
            writeDelay.saw(d.message().createdAtMillis());
        }
        batch.computeIfAbsent(d.matched().get(0).clientId(), c -> new ArrayList<>())
                .add(new Read(record, partition, offset));
    }

    /**
     * Writes the batch: per client, its messages in order, in chunks of one atomic script each, a
     * chunk only once the one before it is stored. Clients are written side by side. Stopping at a
     * client's first failed chunk is what keeps its queue in order: Redis coming back in the middle
     * of a batch must not store a later message before an earlier one that failed a moment before.
     */
    private void writeBatch() {
        for (Map.Entry<String, List<Read>> e : batch.entrySet()) {
            String clientId = e.getKey();
            LiveDeliveries.Lane lane = live != null && !redisFirst.contains(clientId) ? live.lane(clientId) : null;
            if (lane != null && fresh(e.getValue())) {
                // Connected here: the session sends what it can and stores the rest itself, in order.
                List<LiveDeliveries.Offered> offered = new ArrayList<>(e.getValue().size());
                for (Read read : e.getValue()) {
                    offered.add(new LiveDeliveries.Offered(read.partition(), read.offset(), read.record().downlink(),
                            read.record().encoded()));
                }
                inFlight.add(lane.offer(offered));
                continue;
            }
            appendedNow.add(clientId);
            CompletableFuture<?> chain = CompletableFuture.completedFuture(null);
            List<Downlink> chunk = new ArrayList<>();
            long bytes = 0;
            List<DeviceQueues.Item> items = new ArrayList<>();
            for (Read read : e.getValue()) {
                Stored record = read.record();
                Downlink d = record.downlink();
                byte[] value = record.encoded();
                if (!chunk.isEmpty() && (chunk.size() >= CHUNK_MESSAGES || bytes + value.length > CHUNK_BYTES)) {
                    chain = append(chain, clientId, chunk, items);
                    chunk = new ArrayList<>();
                    items = new ArrayList<>();
                    bytes = 0;
                }
                chunk.add(d);
                items.add(new DeviceQueues.Item(d.sourcePartition(), d.sourceOffset(), value));
                bytes += value.length;
            }
            inFlight.add(append(chain, clientId, chunk, items));
        }
        batch.clear();
    }

    /** Whether every message of the list was received within {@link #liveFreshMillis}. */
    private boolean fresh(List<Read> records) {
        long oldest = System.currentTimeMillis() - liveFreshMillis;
        for (Read read : records) {
            if (read.record().downlink().message().createdAtMillis() < oldest) {
                return false;
            }
        }
        return true;
    }

    private CompletableFuture<?> append(CompletableFuture<?> previous, String clientId, List<Downlink> chunk,
            List<DeviceQueues.Item> items) {
        return previous.thenCompose(x -> queues.appendAll(clientId, items)).thenCompose(results -> {
            List<Map.Entry<String, Long>> readers = readers(clientId, results.reader());
            List<CompletableFuture<?>> told = new ArrayList<>(results.items().size());
            boolean repeats = false;
            for (int i = 0; i < results.items().size(); i++) {
                DeviceQueues.Appended appended = results.items().get(i);
                for (long n = 0; n < appended.dropped(); n++) {
                    drops.count(MessageDrops.Reason.SESSION_QUEUE_FULL);
                }
                if (!appended.duplicate()) {
                    told.add(tell(readers, clientId, appended.seq(), chunk.get(i)));
                }
                repeats |= appended.duplicate();
            }
            if (repeats) {
                // Stored by an earlier attempt whose notices may not have gone out (the batch is
                // written again because that attempt failed): the reader is told to look.
                told.add(tell(readers, clientId, 0, chunk.get(0)));
            }
            return CompletableFuture.allOf(told.toArray(CompletableFuture[]::new));
        });
    }

    /**
     * Where the connected session that reads the client's queue is: the reader registered in the
     * queue when the entries were appended (a connection's first read registers it, so this never
     * misses a connection that read before the append), and the node this node's directory has the
     * session connected to, if that is another; only live incarnations.
     */
    private List<Map.Entry<String, Long>> readers(String clientId, String registered) {
        List<Map.Entry<String, Long>> out = new ArrayList<>(2);
        Map.Entry<String, Long> reader = QueueReaderTag.nodeOf(registered);
        if (reader != null && membership.isAlive(reader.getKey(), reader.getValue())) {
            out.add(reader);
        }
        SessionState state = directory.get(clientId).orElse(null);
        if (state != null && state.connected() && membership.isAlive(state.nodeId(), state.nodeIncarnation())) {
            Map.Entry<String, Long> connected = Map.entry(state.nodeId(), state.nodeIncarnation());
            if (!out.contains(connected)) {
                out.add(connected);
            }
        }
        return out;
    }

    /**
     * The nodes holding the connected session learn of the new entry at once: this node directly,
     * another through its node topic. The notice only saves a read: the entry is in Redis before it,
     * and a session that is not connected reads its queue when it connects.
     */
    private CompletableFuture<?> tell(List<Map.Entry<String, Long>> readers, String clientId, long seq, Downlink d) {
        if (readers.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        NodeCommand.Queued notice = new NodeCommand.Queued(clientId, seq, d);
        List<CompletableFuture<?>> sent = new ArrayList<>(readers.size());
        for (Map.Entry<String, Long> reader : readers) {
            if (reader.getKey().equals(nodeId) && reader.getValue() == membership.incarnation()) {
                localCommands.accept(notice);
            } else {
                sent.add(producer.send(topics.node(reader.getKey()), clientId, ClusterCodec.encode(notice)));
            }
        }
        return sent.isEmpty() ? CompletableFuture.completedFuture(null)
                : CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new));
    }

    /** Before committing: everything of the batch is in Redis; false (after a pause) to read it again. */
    public boolean flushed() {
        writeBatch();
        boolean ok = true;
        for (CompletableFuture<?> f : inFlight) {
            try {
                f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                if (ok && failureLog.allow()) {
                    log.warn("DEVICE queue writes failed; the batch is written again: {}{}", e.toString(),
                            failureLog.suppressedNote());
                }
                ok = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ok = false;
            }
        }
        inFlight.clear();
        if (!ok) {
            redisFirst.addAll(appendedNow);
        }
        appendedNow.clear();
        if (ok) {
            redisFirst.clear(); // everything read before is stored now
            stage.done();
            if (writeDelay != null) {
                writeDelay.done();
            }
        } else {
            // The batch is read again: its oldest message stays under way, so a Redis that stalls
            // or is away keeps this node's publishers held (for as long as the stage counts).
            try {
                Thread.sleep(500); // Redis is away: do not spin
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return ok;
    }
}
