package io.fleetmq.kafka.cluster;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.NodeInfo;
import io.fleetmq.core.cluster.NodeStatus;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which nodes are alive, and whether this one may still serve.
 *
 * <p>Every node writes a heartbeat ({@link NodeStatus}) to the compacted {@code nodes} topic every
 * heartbeat interval, with a producer and threads of its own so no other work can delay it, and
 * follows the topic. All judgements use each node's own monotonic clock; wall-clock times in the
 * records are only shown to operators.
 *
 * <p><b>Fencing.</b> This node serves only while a heartbeat it sent less than {@link #fenceAfter()}
 * ago (two thirds of the node timeout) has been confirmed stored. Once that fails it is fenced for
 * good: {@link #serving()} stays false and the fence listeners are told once, so the node can
 * disconnect its clients and come back as a new incarnation.
 *
 * <p><b>Judging others.</b> Another node's incarnation is dead when it said it left, or when this
 * node has read its own heartbeats for a whole node timeout past the last record of the other
 * node. Only heartbeats this node has read back count, so a node whose own view is stale (cut off,
 * paused) never judges anyone. Together the two rules mean no node is declared dead while it still
 * serves: to serve at time t a node must have stored a heartbeat sent after t - fenceAfter, and any
 * node whose read-back horizon passed t has read it.
 *
 * <p>Death listeners are told once per incarnation, from the membership thread; they must hand the
 * work off.
 */
public final class Membership implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Membership.class);
    /**
     * Header of a heartbeat record carrying the node's {@link NodeInfo}: a header, so that nodes
     * which do not know it read the record's value as before.
     */
    static final String INFO_HEADER = "fleetmq-node-info";

    private final ClusterSettings settings;
    private final LongSupplier wallClock;
    private final LongSupplier nanos;
    private final String topic;
    private final long incarnation;
    private final StateFollower follower;
    private final KafkaProducer<String, byte[]> producer;
    private final ScheduledThreadPoolExecutor threads;
    private final long timeoutNanos;
    private final long fenceAfterNanos;

    /** The latest record of each node and when this node read it. */
    private final Map<String, Seen> latest = new ConcurrentHashMap<>();
    /** Own heartbeats sent but not yet read back: heartbeat time (wall) to send time (monotonic). */
    private final ConcurrentSkipListMap<Long, Long> unreadOwn = new ConcurrentSkipListMap<>();
    /** Nodes (by ID and incarnation) already reported dead, so each death is told once. */
    private final Set<String> reportedDead = ConcurrentHashMap.newKeySet();
    /** Incarnations (node ID and incarnation) that said they left: stopped on purpose, or fenced. */
    private final Set<String> left = ConcurrentHashMap.newKeySet();
    /** Incarnations replaced by a newer one of the same node ID before anyone reported them dead. */
    private final java.util.Queue<NodeStatus> superseded = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final CopyOnWriteArrayList<Consumer<NodeStatus>> deathListeners = new CopyOnWriteArrayList<>();
    private final CopyOnWriteArrayList<Runnable> fenceListeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean fenced = new AtomicBoolean();

    /** Send time of the newest heartbeat confirmed stored. */
    private final AtomicLong confirmedSentNanos = new AtomicLong();
    /** Send time of the newest own heartbeat read back: everything stored before it has been read. */
    private volatile long horizonNanos;
    private volatile boolean started;
    private volatile String fenceReason;
    private long lastHeartbeatMillis;
    /** What this node says about itself with each heartbeat; null: nothing. */
    private volatile java.util.function.Supplier<NodeInfo> info;

    private record Seen(NodeStatus status, long receivedNanos, NodeInfo info) {
    }

    /**
     * A node as this node knows it, for operators.
     *
     * @param info  what it said about itself with its latest heartbeat; null if it said nothing
     * @param alive whether this node counts it alive
     */
    public record Member(NodeStatus status, NodeInfo info, boolean alive) {
    }

    public Membership(KafkaClients clients, Admin admin, ClusterSettings settings, LongSupplier wallClock) {
        this(clients, admin, settings, wallClock, System::nanoTime, null);
    }

    /** @param loops supervises the follower of {@code nodes}; null for one of its own */
    public Membership(KafkaClients clients, Admin admin, ClusterSettings settings, LongSupplier wallClock,
            io.fleetmq.kafka.supervise.LoopSupervisor loops) {
        this(clients, admin, settings, wallClock, System::nanoTime, loops);
    }

    public Membership(KafkaClients clients, Admin admin, ClusterSettings settings, LongSupplier wallClock,
            LongSupplier nanos, io.fleetmq.kafka.supervise.LoopSupervisor loops) {
        this.settings = settings;
        this.wallClock = wallClock;
        this.nanos = nanos;
        this.topic = new BrokerTopics(clients.settings().topicPrefix()).nodes();
        // Unique per run; also orders incarnations of one node ID.
        this.incarnation = wallClock.getAsLong() * 1000 + (System.nanoTime() & 0x3FF);
        this.timeoutNanos = settings.nodeTimeout().toNanos();
        this.horizonNanos = nanos.getAsLong(); // nothing read yet: every record is newer than this
        this.fenceAfterNanos = fenceAfter(settings).toNanos();
        this.follower = new StateFollower(clients, admin, topic, this::apply, loops);
        int timeoutMs = (int) settings.nodeTimeout().toMillis();
        // A heartbeat older than the node timeout is worthless: give up on it then, never block a
        // beat for longer than an interval, and do not wait behind other traffic.
        this.producer = clients.producer("heartbeat", Map.of(
                ProducerConfig.LINGER_MS_CONFIG, 0,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs,
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeoutMs,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, Math.max(1_000, settings.heartbeatInterval().toMillis())));
        this.threads = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "fleetmq-membership-" + settings.nodeId());
            t.setDaemon(true);
            return t;
        });
        threads.setRemoveOnCancelPolicy(true);
    }

    /** How long a node serves without a confirmed heartbeat: two thirds of the node timeout. */
    public static Duration fenceAfter(ClusterSettings settings) {
        return settings.nodeTimeout().multipliedBy(2).dividedBy(3);
    }

    public Duration fenceAfter() {
        return Duration.ofNanos(fenceAfterNanos);
    }

    public String nodeId() {
        return settings.nodeId();
    }

    public long incarnation() {
        return incarnation;
    }

    /**
     * Sends {@code supplier}'s info with every heartbeat from now on; it is asked on the heartbeat
     * thread, so it must be quick and must not block.
     */
    public void describeWith(java.util.function.Supplier<NodeInfo> supplier) {
        this.info = supplier;
    }

    /** Sends a heartbeat now rather than at the next interval, so a change of its info shows at once. */
    public void beatNow() {
        try {
            threads.execute(this::beat);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("Membership stopped; no extra heartbeat");
        }
    }

    /** Called with a dead node's last status, once per incarnation. */
    public void onDeath(Consumer<NodeStatus> listener) {
        deathListeners.add(listener);
    }

    /** Called once, from the membership thread, when this node fences itself. */
    public void onFenced(Runnable listener) {
        fenceListeners.add(listener);
    }

    /** Announces this node, reads who else is there, and starts heartbeating and watching. */
    public void start(Duration timeout) {
        start(timeout, 0);
    }

    /**
     * As {@link #start(Duration)}, for a node that fenced itself as {@code previousIncarnation}
     * (0: none): first it says that incarnation left, so the sessions it sent away are settled as
     * on a shutdown, without wills, wherever that has not happened yet.
     */
    public void start(Duration timeout, long previousIncarnation) {
        if (previousIncarnation != 0) {
            status(new NodeStatus(settings.nodeId(), previousIncarnation, false, wallClock.getAsLong()));
        }
        long deadline = nanos.getAsLong() + timeout.toNanos();
        long sent;
        while (true) {
            // Retried: the first write may time out while the producer still fetches metadata.
            sent = nanos.getAsLong();
            try {
                heartbeat(true, sent).get(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - sent)),
                        TimeUnit.MILLISECONDS);
                break;
            } catch (Exception e) {
                if (nanos.getAsLong() - deadline >= 0) {
                    throw new IllegalStateException("could not store the first heartbeat of " + settings.nodeId()
                            + " in " + topic + " within " + timeout.toSeconds() + " s: " + e, e);
                }
            }
        }
        confirmedSentNanos.set(sent);
        follower.start(timeout);
        started = true;
        long interval = settings.heartbeatInterval().toMillis();
        threads.scheduleAtFixedRate(this::beat, interval, interval, TimeUnit.MILLISECONDS);
        long watch = Math.max(10, Math.min(100, interval / 4));
        threads.scheduleWithFixedDelay(this::watch, watch, watch, TimeUnit.MILLISECONDS);
        log.info("Node {} (incarnation {}) joined; live nodes: {}; it fences itself after {} ms without a"
                + " confirmed heartbeat", settings.nodeId(), incarnation, liveNodes(), fenceAfter().toMillis());
    }

    private void beat() {
        try {
            if (!fenced.get()) {
                heartbeat(true, nanos.getAsLong());
            }
        } catch (RuntimeException e) {
            log.warn("Heartbeat of {} not sent: {}", settings.nodeId(), e.toString());
        }
    }

    private CompletableFuture<Void> heartbeat(boolean up, long sentNanos) {
        long millis;
        synchronized (this) {
            // Strictly increasing, so each heartbeat read back maps to its send time.
            millis = Math.max(wallClock.getAsLong(), lastHeartbeatMillis + 1);
            lastHeartbeatMillis = millis;
        }
        unreadOwn.put(millis, sentNanos);
        NodeStatus status = new NodeStatus(settings.nodeId(), incarnation, up, millis);
        CompletableFuture<Void> stored = new CompletableFuture<>();
        try {
            producer.send(record(status), (m, e) -> {
                if (e == null) {
                    confirmed(sentNanos);
                    stored.complete(null);
                } else {
                    log.warn("Heartbeat of {} not stored: {}", settings.nodeId(), e.toString());
                    stored.completeExceptionally(e);
                }
            });
        } catch (RuntimeException e) {
            log.warn("Heartbeat of {} not sent: {}", settings.nodeId(), e.toString());
            stored.completeExceptionally(e);
        }
        return stored;
    }

    /** The heartbeat record, with this node's info in a header when it has any to give. */
    private ProducerRecord<String, byte[]> record(NodeStatus status) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, settings.nodeId(),
                ClusterCodec.encode(status));
        java.util.function.Supplier<NodeInfo> source = info;
        if (source != null && status.up()) {
            try {
                NodeInfo now = source.get();
                if (now != null) {
                    record.headers().add(INFO_HEADER, ClusterCodec.encode(now));
                }
            } catch (RuntimeException e) {
                log.warn("Node info not sent with the heartbeat: {}", e.toString());
            }
        }
        return record;
    }

    private static NodeInfo info(ConsumerRecord<String, byte[]> record) {
        org.apache.kafka.common.header.Header h = record.headers().lastHeader(INFO_HEADER);
        if (h == null || h.value() == null) {
            return null;
        }
        try {
            return ClusterCodec.decodeNodeInfo(h.value());
        } catch (MessageFormatException e) {
            log.debug("Skipping malformed node info at offset {}: {}", record.offset(), e.getMessage());
            return null;
        }
    }

    private void status(NodeStatus status) {
        // Same producer and partition as the heartbeats, so it is stored before the next one.
        producer.send(new ProducerRecord<>(topic, settings.nodeId(), ClusterCodec.encode(status)), (m, e) -> {
            if (e != null) {
                log.warn("Status {} not stored: {}", status, e.toString());
            }
        });
    }

    private void confirmed(long sentNanos) {
        // Compared by difference: nanoTime values may wrap or be negative.
        confirmedSentNanos.accumulateAndGet(sentNanos, (cur, x) -> x - cur > 0 ? x : cur);
    }

    /**
     * Whether this node may serve: started, never fenced, and a heartbeat sent within
     * {@link #fenceAfter()} confirmed. Cheap; call it before acting on the cluster's behalf.
     */
    public boolean serving() {
        if (!started || fenced.get()) {
            return false;
        }
        long silent = nanos.getAsLong() - confirmedSentNanos.get();
        if (silent < fenceAfterNanos) {
            return true;
        }
        fence("no heartbeat confirmed for " + TimeUnit.NANOSECONDS.toMillis(silent) + " ms");
        return false;
    }

    /** Whether this node fenced itself (for good: it comes back only as a new incarnation). */
    public boolean fenced() {
        return fenced.get();
    }

    /** Why this node fenced itself, or null. */
    public String fenceReason() {
        return fenceReason;
    }

    /** Fences this node now, for {@code reason}; idempotent. */
    public void fence(String reason) {
        if (!fenced.compareAndSet(false, true)) {
            return;
        }
        fenceReason = reason;
        log.error("Node {} (incarnation {}) fences itself: {}; it stops serving and rejoins as a new incarnation",
                settings.nodeId(), incarnation, reason);
        try {
            threads.execute(() -> {
                for (Runnable l : fenceListeners) {
                    try {
                        l.run();
                    } catch (RuntimeException e) {
                        log.error("Fence listener failed", e);
                    }
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("Fenced while closing; nobody to tell");
        }
    }

    private void watch() {
        try {
            if (serving()) {
                checkDeaths();
            }
        } catch (RuntimeException e) {
            log.error("Checking node liveness failed", e);
        }
    }

    private void apply(ConsumerRecord<String, byte[]> record) {
        if (record.value() == null) {
            latest.remove(record.key());
            return;
        }
        NodeStatus status;
        try {
            status = ClusterCodec.decodeNodeStatus(record.value());
        } catch (MessageFormatException e) {
            log.warn("Skipping malformed node record at offset {}: {}", record.offset(), e.getMessage());
            return;
        }
        long now = nanos.getAsLong();
        if (!status.up()) {
            left.add(status.nodeId() + "/" + status.incarnation());
        }
        if (status.nodeId().equals(settings.nodeId()) && status.incarnation() == incarnation) {
            Long sent = unreadOwn.get(status.heartbeatMillis());
            if (sent != null) {
                if (sent - horizonNanos > 0) {
                    horizonNanos = sent; // only the follower thread writes it
                }
                unreadOwn.headMap(status.heartbeatMillis(), true).clear();
            }
        }
        latest.compute(status.nodeId(), (id, previous) -> {
            if (previous != null && previous.status().incarnation() > status.incarnation()) {
                return previous;
            }
            if (previous != null && previous.status().incarnation() < status.incarnation()) {
                // The node restarted or rejoined: its earlier incarnation is over, whatever it said last.
                superseded.add(previous.status());
            }
            NodeInfo said = info(record);
            if (said == null && previous != null && previous.status().incarnation() == status.incarnation()) {
                said = previous.info(); // a record without info (say, the one saying it left) keeps the last
            }
            return new Seen(status, now, said);
        });
    }

    /** Whether {@code nodeId} in its {@code incarnation} is alive; this node always is to itself. */
    public boolean isAlive(String nodeId, long nodeIncarnation) {
        if (nodeId.equals(settings.nodeId())) {
            return nodeIncarnation == incarnation;
        }
        Seen s = latest.get(nodeId);
        return s != null && s.status().incarnation() == nodeIncarnation && alive(s);
    }

    /**
     * Whether that incarnation said it left (a graceful stop, or a node that fenced itself and came
     * back): its connections were closed by the server, so no will is due for them [MQTT-3.14.2].
     */
    public boolean hasLeft(String nodeId, long nodeIncarnation) {
        return left.contains(nodeId + "/" + nodeIncarnation);
    }

    /**
     * Whether that incarnation is over for good, as far as this node knows: it said it left, a newer
     * incarnation of the node replaced it, or this node declared it dead (a node fences itself before
     * others may, so a dead incarnation never serves again). An incarnation this node has not heard of
     * yet (one that joined a moment ago) is not gone.
     */
    public boolean isGone(String nodeId, long nodeIncarnation) {
        if (nodeId.equals(settings.nodeId()) && nodeIncarnation < incarnation) {
            return true;
        }
        String key = nodeId + "/" + nodeIncarnation;
        if (left.contains(key) || reportedDead.contains(key)) {
            return true;
        }
        Seen s = latest.get(nodeId);
        return s != null && s.status().incarnation() > nodeIncarnation;
    }

    /** Whether the latest incarnation of {@code nodeId} is alive. */
    public boolean isAlive(String nodeId) {
        if (nodeId.equals(settings.nodeId())) {
            return true;
        }
        Seen s = latest.get(nodeId);
        return s != null && alive(s);
    }

    public Set<String> liveNodes() {
        Set<String> live = new TreeSet<>();
        latest.values().stream().filter(this::alive).forEach(s -> live.add(s.status().nodeId()));
        live.add(settings.nodeId());
        return live;
    }

    /** Every node heard of, alive or not, with its latest status. */
    public Map<String, NodeStatus> nodes() {
        Map<String, NodeStatus> all = new java.util.HashMap<>();
        latest.forEach((id, s) -> all.put(id, s.status()));
        return Map.copyOf(all);
    }

    /**
     * Every node heard of, with what it said about itself and whether it counts as alive; this node
     * with its info as of now.
     */
    public Map<String, Member> members() {
        Map<String, Member> all = new java.util.TreeMap<>();
        latest.forEach((id, s) -> all.put(id, new Member(s.status(), s.info(), alive(s))));
        java.util.function.Supplier<NodeInfo> source = info;
        Member own = all.get(settings.nodeId());
        NodeStatus ownStatus = own != null && own.status().incarnation() == incarnation ? own.status()
                : new NodeStatus(settings.nodeId(), incarnation, true, lastHeartbeatMillis());
        all.put(settings.nodeId(), new Member(ownStatus, source != null ? source.get() : null, !fenced.get()));
        return all;
    }

    private synchronized long lastHeartbeatMillis() {
        return lastHeartbeatMillis;
    }

    /** Time since this node's newest confirmed heartbeat was sent. */
    public Duration heartbeatAge() {
        return Duration.ofNanos(Math.max(0, nanos.getAsLong() - confirmedSentNanos.get()));
    }

    private boolean alive(Seen s) {
        if (s.status().nodeId().equals(settings.nodeId()) && s.status().incarnation() == incarnation) {
            return true;
        }
        return s.status().up() && horizonNanos - s.receivedNanos() < timeoutNanos;
    }

    private void checkDeaths() {
        NodeStatus old;
        while ((old = superseded.poll()) != null) {
            if (!(old.nodeId().equals(settings.nodeId()) && old.incarnation() == incarnation)
                    && reportedDead.add(old.nodeId() + "/" + old.incarnation())) {
                log.warn("Node {} (incarnation {}) is {}", old.nodeId(), old.incarnation(),
                        hasLeft(old.nodeId(), old.incarnation()) ? "gone: it left" : "replaced by a newer incarnation");
                for (Consumer<NodeStatus> l : deathListeners) {
                    l.accept(old);
                }
            }
        }
        for (Seen s : latest.values()) {
            NodeStatus status = s.status();
            if (status.nodeId().equals(settings.nodeId()) && status.incarnation() == incarnation || alive(s)) {
                continue;
            }
            if (reportedDead.add(status.nodeId() + "/" + status.incarnation())) {
                log.warn("Node {} (incarnation {}) is {}", status.nodeId(), status.incarnation(), status.up()
                        ? "dead: nothing from it for " + TimeUnit.NANOSECONDS.toMillis(horizonNanos - s.receivedNanos())
                                + " ms of heartbeats this node read" : "gone: it left");
                for (Consumer<NodeStatus> l : deathListeners) {
                    l.accept(status);
                }
            }
        }
    }

    /**
     * Stops heartbeating. A node that stops while serving says it left (so others need not wait for
     * the timeout); a fenced node tries briefly too, since its clients were already sent elsewhere.
     */
    @Override
    public void close() {
        boolean wasStarted = started;
        started = false;
        threads.shutdownNow();
        if (wasStarted) {
            Duration wait = fenced.get() ? Duration.ofSeconds(1) : Duration.ofSeconds(5);
            try {
                heartbeat(false, nanos.getAsLong()).get(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                log.warn("Could not announce that {} leaves: {}", settings.nodeId(), e.toString());
            }
        }
        producer.close(Duration.ofSeconds(1));
        follower.close();
    }
}
