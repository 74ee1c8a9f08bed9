package io.fleetmq.session.cluster;

import io.fleetmq.core.cluster.ClientSubscriptions;
import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.ClusterSettings;
import io.fleetmq.kafka.cluster.Membership;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a session actor tells the rest of the cluster: its connect requests and disconnects (to the
 * connect sequence, through {@code session.events}) and its subscriptions (to every node, through the
 * {@code subscriptions} topic).
 */
public final class ClusterLink implements io.fleetmq.session.ClusterPort {

    private static final Logger log = LoggerFactory.getLogger(ClusterLink.class);

    /** Header naming the node (and incarnation) that wrote a subscriptions record. */
    static final String WRITER_HEADER = "writer";
    /** Header with the session epoch a subscriptions record belongs to. */
    static final String EPOCH_HEADER = "epoch";

    private final ClusterSettings settings;
    private final BrokerTopics topics;
    private final ClusterProducer producer;
    private final Membership membership;
    private final SessionDirectory directory;
    /** Per client ID, the newest connection epoch whose subscriptions this node applied. */
    private final Map<String, Long> subscriptionEpochs = new ConcurrentHashMap<>();

    public ClusterLink(ClusterSettings settings, BrokerTopics topics, ClusterProducer producer, Membership membership,
            SessionDirectory directory) {
        this.settings = settings;
        this.topics = topics;
        this.producer = producer;
        this.membership = membership;
        this.directory = directory;
    }

    public String nodeId() {
        return settings.nodeId();
    }

    @Override
    public long incarnation() {
        return membership.incarnation();
    }

    @Override
    public Duration connectTimeout() {
        return settings.connectTimeout();
    }

    @Override
    public boolean serving() {
        return membership.serving();
    }

    public Membership membership() {
        return membership;
    }

    public SessionDirectory directory() {
        return directory;
    }

    @Override
    public java.util.Optional<io.fleetmq.core.cluster.SessionState> session(String clientId) {
        return directory.get(clientId);
    }

    private volatile int maxApplicationSessions = Integer.MAX_VALUE;

    /** Bounds the persistent APPLICATION sessions of the cluster (each costs a Kafka topic). */
    public ClusterLink maxApplicationSessions(int max) {
        this.maxApplicationSessions = max;
        return this;
    }

    /**
     * Checked against this node's copy of the cluster's sessions: CONNECTs at the same moment on
     * several nodes may together go beyond the bound by their number.
     */
    @Override
    public boolean admitsApplicationSession(String clientId) {
        return SessionDirectory.persistentApplication(directory.get(clientId).orElse(null))
                || directory.applicationSessions() < maxApplicationSessions;
    }

    /** Hands an event to the connect sequence; completes once Kafka stored it. */
    @Override
    public CompletableFuture<?> event(SessionEvent event) {
        return producer.send(topics.sessionEvents(), event.clientId(), ClusterCodec.encode(event)).whenComplete((m, e) -> {
            if (e != null) {
                log.warn("Session event {} for {} not stored: {}",
                        event.getClass().getSimpleName(), ClientText.of(event.clientId()),
                        e.toString());
            }
        });
    }

    /**
     * The session's subscriptions changed on this node, in its connection {@code epoch}; every node
     * learns the new set.
     */
    @Override
    public void subscriptionsChanged(String clientId, long epoch, List<Subscription> subscriptions) {
        subscriptionEpochs.merge(clientId, epoch, Math::max);
        RecordHeaders headers = headers(epoch);
        headers.add(WRITER_HEADER, writer().getBytes(StandardCharsets.UTF_8));
        byte[] value = subscriptions.isEmpty() ? null : ClusterCodec.encode(
                new ClientSubscriptions(clientId, nodeId(), incarnation(), subscriptions));
        producer.send(topics.subscriptions(), null, clientId, value, headers).whenComplete((m, e) -> {
            if (e != null) {
                log.warn("Subscriptions of {} not stored in Kafka; other nodes do not see the change: {}",
                        ClientText.of(clientId),
                        e.toString());
            }
        });
    }

    static RecordHeaders headers(long epoch) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(EPOCH_HEADER, Long.toString(epoch).getBytes(StandardCharsets.UTF_8));
        return headers;
    }

    /**
     * A record of the {@code subscriptions} topic, in topic order: the node's trie takes it unless this
     * node wrote it (the trie had it first) or it comes from an older connection of the client than
     * one already applied (a node that lost the session may still have been writing).
     */
    public void applySubscriptions(ConsumerRecord<String, byte[]> record, SubscriptionTrie trie) {
        String clientId = record.key();
        if (clientId == null) {
            return;
        }
        Header writer = record.headers().lastHeader(WRITER_HEADER);
        if (writer != null && writer().equals(new String(writer.value(), StandardCharsets.UTF_8))) {
            return;
        }
        Header epochHeader = record.headers().lastHeader(EPOCH_HEADER);
        long epoch = epochHeader == null ? 0 : Long.parseLong(new String(epochHeader.value(), StandardCharsets.UTF_8));
        if (epoch < subscriptionEpochs.getOrDefault(clientId, 0L)) {
            return;
        }
        subscriptionEpochs.put(clientId, epoch);
        List<Subscription> subscriptions = List.of();
        if (record.value() != null) {
            try {
                subscriptions = ClusterCodec.decodeSubscriptions(record.value()).subscriptions();
            } catch (MessageFormatException e) {
                log.warn("Skipping malformed subscriptions record at offset {}: {}", record.offset(), e.getMessage());
                return;
            }
        }
        // In place: routing reads the trie meanwhile, and must not find the client gone for a moment.
        trie.replaceClient(clientId, subscriptions);
    }

    /** This node's own writer tag, which its subscription follower skips. */
    String writer() {
        return nodeId() + "/" + incarnation();
    }
}
