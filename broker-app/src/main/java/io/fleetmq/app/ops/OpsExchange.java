package io.fleetmq.app.ops;

import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.TopicLayout;
import io.fleetmq.session.RecentDrops;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operators' view of the whole cluster, kept by every node. Each node samples its counters
 * every interval, keeps the samples ({@link Sampler}) and its recent drops ({@link RecentDrops}),
 * and publishes a {@link NodeReport} to the {@code ops} topic; every node follows that topic and
 * keeps what the others reported, bounded per node, forgetting a node an hour after its last report.
 *
 * <p>Why a topic every node follows rather than asking the nodes when an operator asks: an
 * answer then needs no other node to be reachable or quick, a node that has gone keeps its last hour
 * visible (the interesting hour, often), and a node that starts reads the last hour from the topic.
 * The price is a small record per node and interval, and remote data as old as one interval.
 *
 * <p>Node-wide rather than per incarnation: a node that fences itself and rejoins keeps its history.
 */
public final class OpsExchange implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(OpsExchange.class);
    /** How far back a node reads and how long it remembers a silent node: the statistics' span. */
    static final Duration SPAN = Duration.ofHours(1);

    private final KafkaClients kafka;
    private final String topic;
    private final String nodeId;
    private final String run = UUID.randomUUID().toString();
    private final long intervalMillis;
    private final Sampler sampler;
    private final RecentDrops drops;
    private final Map<String, NodeHistory> others = new ConcurrentHashMap<>();
    private final ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fleetmq-ops-sampler");
        t.setDaemon(true);
        return t;
    });
    private KafkaProducer<String, byte[]> producer;
    private Thread follower;
    private volatile KafkaConsumer<String, byte[]> following;
    private final java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
    private volatile boolean closed;
    private long reportedUpTo;
    /** The first drop of a report Kafka did not take (sent again), or {@code Long.MAX_VALUE}. */
    private final java.util.concurrent.atomic.AtomicLong unsentFrom = new java.util.concurrent.atomic.AtomicLong(
            Long.MAX_VALUE);
    private volatile long lastPublishFailureLog;

    public OpsExchange(KafkaClients kafka, BrokerTopics topics, String nodeId, Duration interval, Sampler sampler,
            RecentDrops drops) {
        this.kafka = kafka;
        this.topic = topics.ops();
        this.nodeId = nodeId;
        this.intervalMillis = interval.toMillis();
        this.sampler = sampler;
        this.drops = drops;
        this.reportedUpTo = drops.written();
    }

    /** Makes sure the topic exists, starts following it, and samples from the next interval boundary on. */
    public void start(Admin admin) {
        ensureTopic(admin);
        producer = kafka.producer("ops", Map.of(ProducerConfig.LINGER_MS_CONFIG, 5));
        follower = new Thread(this::follow, "fleetmq-ops-follower");
        follower.setDaemon(true);
        follower.start();
        long now = System.currentTimeMillis();
        long firstDelay = intervalMillis - now % intervalMillis;
        ticks.scheduleAtFixedRate(this::tick, firstDelay, intervalMillis, TimeUnit.MILLISECONDS);
    }

    private void ensureTopic(Admin admin) {
        // Deleted by time: an hour and a margin, in segments small enough to go soon after.
        NewTopic t = new NewTopic(topic, 1, kafka.settings().replicationFactor()).configs(
                TopicLayout.withRecordConfigs(kafka.settings(), Map.of(
                        TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
                        TopicConfig.RETENTION_MS_CONFIG, Long.toString(SPAN.plusMinutes(10).toMillis()),
                        TopicConfig.SEGMENT_MS_CONFIG, Long.toString(Duration.ofMinutes(10).toMillis()))));
        try {
            admin.createTopics(List.of(t)).all().get(kafka.settings().requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("cannot create topic " + topic + ": " + e.getCause(), e.getCause());
            }
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("Kafka did not create topic " + topic + " in time", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * One interval ended: sample, and tell the others. A report Kafka did not take loses its sample;
     * its drops go again with the next report (the others keep each drop once, by its sequence).
     */
    private void tick() {
        long from = Math.min(reportedUpTo, unsentFrom.getAndSet(Long.MAX_VALUE));
        try {
            long at = System.currentTimeMillis() / intervalMillis * intervalMillis;
            Sample sample = sampler.take(at);
            // Read and move on in one step: a drop added between two steps would never be reported.
            RecentDrops.Batch batch = drops.after(from);
            reportedUpTo = batch.next();
            List<RecentDrops.Drop> fresh = batch.drops();
            if (fresh.size() > NodeReport.MAX_DROPS) {
                fresh = fresh.subList(fresh.size() - NodeReport.MAX_DROPS, fresh.size());
            }
            NodeReport report = new NodeReport(nodeId, run, at, intervalMillis, sample, fresh, sampler.dropCounts());
            producer.send(new ProducerRecord<>(topic, nodeId, report.encode()), (meta, e) -> {
                if (e == null) {
                    return;
                }
                unsentFrom.accumulateAndGet(from, Math::min);
                if (System.currentTimeMillis() - lastPublishFailureLog > 60_000) {
                    lastPublishFailureLog = System.currentTimeMillis();
                    log.warn("Operations report not published (other nodes miss this node's statistics for it): {}",
                            e.toString());
                }
            });
        } catch (RuntimeException e) {
            unsentFrom.accumulateAndGet(from, Math::min);
            log.warn("Sampling the node's statistics failed", e);
        }
    }

    private void follow() {
        TopicPartition p = new TopicPartition(topic, 0);
        while (!closed) {
            try (KafkaConsumer<String, byte[]> c = kafka.consumer("ops", null, Map.of())) {
                following = c;
                if (closed) {
                    return;
                }
                c.assign(List.of(p));
                Map<TopicPartition, OffsetAndTimestamp> from = c.offsetsForTimes(
                        Map.of(p, System.currentTimeMillis() - SPAN.toMillis()), kafka.settings().requestTimeout());
                OffsetAndTimestamp at = from.get(p);
                if (at != null) {
                    c.seek(p, at.offset());
                } else {
                    // Nothing from the last hour (or nothing at all): read what there is. Seeking to the
                    // end would be resolved only at the first poll, and a report written meanwhile (with
                    // the drops it alone carries) would be skipped. Older reports age out as silent nodes.
                    c.seekToBeginning(List.of(p));
                }
                while (!closed) {
                    for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(500))) {
                        NodeReport report = NodeReport.decode(r.value());
                        if (report != null && !report.node().equals(nodeId)) {
                            others.computeIfAbsent(report.node(), NodeHistory::new).apply(report);
                        }
                    }
                    forgetSilent();
                }
            } catch (org.apache.kafka.common.errors.WakeupException
                    | org.apache.kafka.common.errors.InterruptException e) {
                return;
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                log.warn("Following the operations topic failed; starting again in 1 s: {}", e.toString());
                try {
                    if (stopped.await(1, TimeUnit.SECONDS)) {
                        return;
                    }
                } catch (InterruptedException ie) {
                    return;
                }
            } finally {
                following = null;
            }
        }
    }

    private void forgetSilent() {
        long oldest = System.currentTimeMillis() - SPAN.toMillis();
        others.values().removeIf(h -> h.lastHeardMillis() < oldest);
    }

    public String nodeId() {
        return nodeId;
    }

    public Duration interval() {
        return Duration.ofMillis(intervalMillis);
    }

    /** This node's own samples and drops, first; then every other node heard from within the hour, by ID. */
    public List<NodeView> nodes() {
        List<NodeView> all = new ArrayList<>();
        all.add(new NodeView(nodeId, sampler.samples(), drops.all(), sampler.dropCounts()));
        others.values().stream().sorted(Comparator.comparing(NodeHistory::node))
                .forEach(h -> all.add(new NodeView(h.node(), h.samples(), h.drops(), h.counts())));
        return all;
    }

    /** One node as known here: its samples and drops oldest first, its drop counts since it started. */
    public record NodeView(String node, List<Sample> samples, List<RecentDrops.Drop> drops, Map<String, Long> counts) {
    }

    @Override
    public void close() {
        closed = true;
        ticks.shutdownNow();
        stopped.countDown();
        Thread f = follower;
        if (f != null) {
            // A wakeup, not an interrupt: an interrupted consumer cannot close its fetch sessions cleanly.
            KafkaConsumer<String, byte[]> c = following;
            if (c != null) {
                c.wakeup();
            }
            try {
                f.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(1));
        }
    }
}
