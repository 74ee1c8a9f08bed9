package io.fleetmq.app;

import io.fleetmq.app.http.SessionsView;
import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.app.AppTopics;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.session.SessionActor;
import io.fleetmq.session.SessionRegistry;
import io.fleetmq.session.SessionView;
import io.fleetmq.session.cluster.ClusterLink;
import io.fleetmq.session.cluster.SessionDirectory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin API's view of the sessions of one incarnation ({@link SessionsView}). Everything but
 * the per-session details comes from the node's replicated copies, so listing costs no I/O; the
 * details that live elsewhere (Redis, Kafka, the session's actor) are asked for with a short
 * timeout and shown as unknown when they do not answer in it.
 */
final class SessionsAdapter implements SessionsView {

    private static final Logger log = LoggerFactory.getLogger(SessionsAdapter.class);
    /**
     * How long a detail read waits for Redis, Kafka or the session's actor: a session being ended
     * has a backlog topic that Kafka no longer knows, which its admin client would otherwise wait
     * for until the request timeout, holding up the whole answer.
     */
    private static final Duration DETAIL_TIMEOUT = Duration.ofSeconds(2);

    private final String nodeId;
    private final SessionDirectory directory;
    private final SessionRegistry registry;
    private final SubscriptionTrie subscriptions;
    private final Membership membership;
    private final ClusterProducer producer;
    private final BrokerTopics topics;
    private final ClusterLink link;
    private final DeviceQueues deviceQueues;
    private final AppTopics appTopics;
    private final Admin admin;
    private final Duration timeout;
    private final Duration detailTimeout;

    SessionsAdapter(String nodeId, SessionDirectory directory, SessionRegistry registry,
            SubscriptionTrie subscriptions, Membership membership, ClusterProducer producer, BrokerTopics topics,
            ClusterLink link, DeviceQueues deviceQueues, AppTopics appTopics, Admin admin, Duration timeout) {
        this.nodeId = nodeId;
        this.directory = directory;
        this.registry = registry;
        this.subscriptions = subscriptions;
        this.membership = membership;
        this.producer = producer;
        this.topics = topics;
        this.link = link;
        this.deviceQueues = deviceQueues;
        this.appTopics = appTopics;
        this.admin = admin;
        this.timeout = timeout;
        this.detailTimeout = timeout.compareTo(DETAIL_TIMEOUT) < 0 ? timeout : DETAIL_TIMEOUT;
    }

    @Override
    public String nodeId() {
        return nodeId;
    }

    @Override
    public Stream<SessionState> sessions(String from) {
        return directory.ordered(from);
    }

    @Override
    public Optional<SessionState> session(String clientId) {
        return directory.get(clientId);
    }

    @Override
    public List<Subscription> subscriptions(String clientId) {
        return subscriptions.subscriptionsOf(clientId);
    }

    @Override
    public boolean nodeAlive(SessionState s) {
        return membership.isAlive(s.nodeId(), s.nodeIncarnation());
    }

    @Override
    public SessionView local(String clientId) {
        SessionActor actor = registry.get(clientId);
        return actor == null ? null : await(actor.inspect(), "the session of " + clientId);
    }

    @Override
    public Long deviceQueued(String clientId) {
        return deviceQueues == null ? null : await(deviceQueues.size(clientId), "the DEVICE queue of " + clientId);
    }

    @Override
    public Long applicationBacklog(String clientId) {
        TopicPartition partition = new TopicPartition(appTopics.topic(clientId), 0); // one partition per client
        try {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(appTopics.group(clientId),
                            new ListConsumerGroupOffsetsOptions().timeoutMs((int) detailTimeout.toMillis()))
                    .partitionsToOffsetAndMetadata().get(detailTimeout.toMillis(), TimeUnit.MILLISECONDS);
            OffsetAndMetadata position = committed.get(partition);
            long end = offset(partition, OffsetSpec.latest());
            // Nothing committed yet: the client's reader starts at the earliest record.
            long from = position != null ? position.offset() : offset(partition, OffsetSpec.earliest());
            return Math.max(0, end - from);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException | TimeoutException e) {
            log.debug("Backlog of {} not measured: {}", clientId, HealthStatus.describe(e));
            return null;
        }
    }

    private long offset(TopicPartition partition, OffsetSpec spec)
            throws InterruptedException, ExecutionException, TimeoutException {
        return admin.listOffsets(Map.of(partition, spec),
                        new ListOffsetsOptions().timeoutMs((int) detailTimeout.toMillis()))
                .partitionResult(partition).get(detailTimeout.toMillis(), TimeUnit.MILLISECONDS).offset();
    }

    @Override
    public void disconnect(SessionState s, boolean endSession) {
        NodeCommand.AdminDisconnect command = new NodeCommand.AdminDisconnect(s.clientId(), s.epoch(), endSession);
        if (s.nodeId().equals(nodeId) && nodeAlive(s)) {
            registry.command(command);
        } else if (nodeAlive(s)) {
            await(producer.send(topics.node(s.nodeId()), s.clientId(), ClusterCodec.encode(command)),
                    "the command to node " + s.nodeId(), true);
        } else if (endSession) {
            // The session's node is gone and the connect sequence holds it: it ends it as on expiry.
            await(link.event(new SessionEvent.Expired(s.clientId(), s.epoch())), "the end of " + s.clientId(), true);
        }
    }

    private <T> T await(CompletionStage<T> stage, String what) {
        return await(stage, what, false);
    }

    private <T> T await(CompletionStage<T> stage, String what, boolean required) {
        try {
            Duration wait = required ? timeout : detailTimeout;
            return stage.toCompletableFuture().get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (required) {
                throw new IllegalStateException("interrupted");
            }
            return null;
        } catch (ExecutionException | TimeoutException e) {
            if (required) {
                throw new IllegalStateException(what + " was not stored in Kafka in time", e);
            }
            log.debug("No answer about {}: {}", what, HealthStatus.describe(e));
            return null;
        }
    }
}
