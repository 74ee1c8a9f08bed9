package io.fleetmq.app;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.app.http.ClusterNodes;
import io.fleetmq.app.http.RetainedMessages;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.retained.LogPosition;
import io.fleetmq.core.retained.RetainedIndex;
import io.fleetmq.kafka.cluster.Membership;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The admin API's view of the node's message path and membership ({@link RetainedMessages},
 * {@link ClusterNodes}), always over the current incarnation: after the node fenced itself and
 * rejoined, the new one's. A fenced incarnation answers with {@link IllegalStateException}.
 */
final class AdminMessaging implements RetainedMessages, ClusterNodes {

    private final Incarnations incarnations;
    private final BrokerConfig config;
    private final Limits limits;

    AdminMessaging(Incarnations incarnations, BrokerConfig config) {
        this.incarnations = incarnations;
        this.config = config;
        var c = config.connectionLimits();
        this.limits = new Limits(config.mqttLimits().maximumPacketSize(), c.maxTopicLength(), c.maxTopicLevels(),
                c.maxUserProperties(), c.maxUserPropertyBytes());
    }

    private Messaging serving() {
        Messaging m = incarnations.current();
        if (m == null || m.fenced()) {
            throw new IllegalStateException("fenced off the cluster; rejoining");
        }
        return m;
    }

    // ------------------------------------------------------------------ retained messages and publishing

    @Override
    public List<BrokerMessage> matching(String filter) {
        return serving().retained().match(filter);
    }

    @Override
    public BrokerMessage get(String topic) {
        return serving().retained().get(topic);
    }

    @Override
    public boolean isPending(String topic) {
        return serving().retained().isPending(topic);
    }

    @Override
    public CompletableFuture<LogPosition> publish(BrokerMessage message) {
        return serving().publishLog().appendAt(message);
    }

    @Override
    public String retainedRefusal(BrokerMessage message) {
        RetainedIndex.Room room = serving().retained().room(message.topic(), message);
        return switch (room) {
            case FITS -> null;
            case MESSAGES_EXCEEDED -> "the cluster holds its maximum of " + config.maxRetainedMessages()
                    + " retained messages (mqtt.max-retained-messages)";
            case BYTES_EXCEEDED -> "the cluster holds its maximum of " + config.maxRetainedBytes()
                    + " bytes of retained messages (mqtt.max-retained-bytes)";
        };
    }

    @Override
    public Limits limits() {
        return limits;
    }

    @Override
    public long now() {
        return System.currentTimeMillis();
    }

    // ------------------------------------------------------------------ nodes

    @Override
    public List<Node> nodes() {
        Messaging m = incarnations.current();
        if (m == null) {
            throw new IllegalStateException("not in the cluster yet");
        }
        Membership membership = m.membership();
        List<Node> nodes = new ArrayList<>();
        membership.members().forEach((id, member) -> {
            boolean self = id.equals(config.nodeId());
            nodes.add(new Node(id, member.status().incarnation(), member.alive(), member.status().up(),
                    member.status().heartbeatMillis(), member.info(), self, self && m.fenced()));
        });
        return nodes;
    }

    @Override
    public Optional<Node> drain(String nodeId, boolean drain, Duration wait) {
        Messaging m = serving();
        try {
            m.sendDrain(nodeId, drain).get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | CompletionException | TimeoutException e) {
            throw new IllegalStateException("the drain command was not stored in Kafka (" + e.getClass().getSimpleName()
                    + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
        // The node says it in its next heartbeat, sent at once when it takes the command.
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            Optional<Node> node = nodes().stream().filter(n -> n.nodeId().equals(nodeId)).findFirst();
            boolean reported = node.map(n -> n.info() != null && n.info().draining() == drain).orElse(false);
            if (reported || node.isEmpty() || System.nanoTime() - deadline >= 0) {
                return node;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return node;
            }
        }
    }
}
