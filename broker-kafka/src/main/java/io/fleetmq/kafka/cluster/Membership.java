package io.fleetmq.kafka.cluster;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.NodeStatus;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which nodes are alive. Every node writes a heartbeat ({@link NodeStatus}) to the compacted
 * {@code nodes} topic every heartbeat interval and follows the topic; a node whose latest heartbeat
 * is older than the node timeout, or that said it left, is dead. Heartbeat times are the writer's
 * clock, so node clocks must agree to well within the timeout (NTP does).
 *
 * <p>Death listeners are told once per incarnation, from the timer thread, when a node that was
 * alive is no longer; they must hand the work off.
 */
public final class Membership implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Membership.class);

    private final ClusterSettings settings;
    private final ClusterProducer producer;
    private final ScheduledExecutorService timer;
    private final LongSupplier clock;
    private final String topic;
    private final long incarnation;
    private final StateFollower follower;
    private final Map<String, NodeStatus> latest = new ConcurrentHashMap<>();
    /** Nodes (by ID and incarnation) already reported dead, so each death is told once. */
    private final Set<String> reportedDead = ConcurrentHashMap.newKeySet();
    private final CopyOnWriteArrayList<Consumer<NodeStatus>> deathListeners = new CopyOnWriteArrayList<>();
    private ScheduledFuture<?> beat;
    private ScheduledFuture<?> check;

    public Membership(KafkaClients clients, Admin admin, ClusterSettings settings, ClusterProducer producer,
            ScheduledExecutorService timer, LongSupplier clock) {
        this.settings = settings;
        this.producer = producer;
        this.timer = timer;
        this.clock = clock;
        this.topic = new BrokerTopics(clients.settings().topicPrefix()).nodes();
        // Unique per run; also orders incarnations of one node ID.
        this.incarnation = clock.getAsLong() * 1000 + (System.nanoTime() & 0x3FF);
        this.follower = new StateFollower(clients, admin, topic, this::apply);
    }

    public String nodeId() {
        return settings.nodeId();
    }

    public long incarnation() {
        return incarnation;
    }

    /** Called with a dead node's last status, once per incarnation. */
    public void onDeath(Consumer<NodeStatus> listener) {
        deathListeners.add(listener);
    }

    /** Announces this node, reads who else is there, and starts heartbeating and watching. */
    public void start(Duration timeout) {
        heartbeat(true).join();
        follower.start(timeout);
        long interval = settings.heartbeatInterval().toMillis();
        beat = timer.scheduleAtFixedRate(() -> heartbeat(true), interval, interval, TimeUnit.MILLISECONDS);
        check = timer.scheduleAtFixedRate(this::checkDeaths, interval / 2, interval / 2, TimeUnit.MILLISECONDS);
        log.info("Node {} (incarnation {}) joined; live nodes: {}", settings.nodeId(), incarnation, liveNodes());
    }

    private java.util.concurrent.CompletableFuture<?> heartbeat(boolean up) {
        NodeStatus status = new NodeStatus(settings.nodeId(), incarnation, up, clock.getAsLong());
        return producer.send(topic, settings.nodeId(), ClusterCodec.encode(status)).whenComplete((m, e) -> {
            if (e != null) {
                log.warn("Heartbeat of {} not stored: {}", settings.nodeId(), e.toString());
            }
        });
    }

    private void apply(ConsumerRecord<String, byte[]> record) {
        if (record.value() == null) {
            latest.remove(record.key());
            return;
        }
        try {
            NodeStatus status = ClusterCodec.decodeNodeStatus(record.value());
            NodeStatus previous = latest.get(status.nodeId());
            if (previous == null || previous.incarnation() <= status.incarnation()) {
                latest.put(status.nodeId(), status);
            }
        } catch (MessageFormatException e) {
            log.warn("Skipping malformed node record at offset {}: {}", record.offset(), e.getMessage());
        }
    }

    /** Whether {@code nodeId} in its {@code incarnation} is alive; this node always is to itself. */
    public boolean isAlive(String nodeId, long nodeIncarnation) {
        if (nodeId.equals(settings.nodeId())) {
            return nodeIncarnation == incarnation;
        }
        NodeStatus s = latest.get(nodeId);
        return s != null && s.incarnation() == nodeIncarnation && alive(s, clock.getAsLong());
    }

    /** Whether the latest incarnation of {@code nodeId} is alive. */
    public boolean isAlive(String nodeId) {
        if (nodeId.equals(settings.nodeId())) {
            return true;
        }
        NodeStatus s = latest.get(nodeId);
        return s != null && alive(s, clock.getAsLong());
    }

    public Set<String> liveNodes() {
        Set<String> live = new TreeSet<>();
        long now = clock.getAsLong();
        latest.values().stream().filter(s -> alive(s, now)).forEach(s -> live.add(s.nodeId()));
        live.add(settings.nodeId());
        return live;
    }

    /** Every node heard of, alive or not, with its latest status. */
    public Map<String, NodeStatus> nodes() {
        return Map.copyOf(latest);
    }

    private boolean alive(NodeStatus s, long now) {
        return s.up() && now - s.heartbeatMillis() < settings.nodeTimeout().toMillis();
    }

    private void checkDeaths() {
        try {
            long now = clock.getAsLong();
            for (NodeStatus s : latest.values()) {
                if (s.nodeId().equals(settings.nodeId()) || alive(s, now)) {
                    continue;
                }
                if (reportedDead.add(s.nodeId() + "/" + s.incarnation())) {
                    log.warn("Node {} (incarnation {}) is {}", s.nodeId(), s.incarnation(),
                            s.up() ? "dead: no heartbeat for " + (now - s.heartbeatMillis()) + " ms" : "gone: it left");
                    for (Consumer<NodeStatus> l : deathListeners) {
                        l.accept(s);
                    }
                }
            }
        } catch (RuntimeException e) {
            log.error("Checking node liveness failed", e);
        }
    }

    /** Says this node left (so others need not wait for the timeout), then stops. */
    @Override
    public void close() {
        if (beat != null) {
            beat.cancel(false);
            check.cancel(false);
            try {
                heartbeat(false).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.warn("Could not announce that {} leaves: {}", settings.nodeId(), e.toString());
            }
        }
        follower.close();
    }
}
