package io.fleetmq.app;

import io.fleetmq.app.http.OperationsView;
import io.fleetmq.app.http.OpsModels;
import io.fleetmq.app.ops.OpsExchange;
import io.fleetmq.app.ops.Sample;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.session.RecentDrops;
import io.fleetmq.session.cluster.SessionDirectory;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The admin API's view of the running cluster ({@link OperationsView}): dropped messages and
 * statistics from the node's {@link OpsExchange}, shared subscriptions from the current
 * incarnation's copy of the cluster's sessions and subscriptions and, for their backlogs, from Kafka.
 */
final class Operations implements OperationsView {

    private final OpsExchange exchange;
    private final Incarnations incarnations;
    private final Admin admin;
    private final BrokerTopics topics;
    private final Duration timeout;

    Operations(OpsExchange exchange, Incarnations incarnations, Admin admin, BrokerTopics topics, Duration timeout) {
        this.exchange = exchange;
        this.incarnations = incarnations;
        this.admin = admin;
        this.topics = topics;
        this.timeout = timeout;
    }

    @Override
    public String nodeId() {
        return exchange.nodeId();
    }

    @Override
    public Duration statsInterval() {
        return exchange.interval();
    }

    @Override
    public List<OpsModels.NodeOps> nodes() {
        return exchange.nodes().stream().map(n -> new OpsModels.NodeOps(n.node(),
                n.samples().stream().map(Operations::sample).toList(),
                n.drops().stream().map(d -> drop(n.node(), d)).toList(), n.counts())).toList();
    }

    private static OpsModels.Sample sample(Sample s) {
        return new OpsModels.Sample(Instant.ofEpochMilli(s.atMillis()), s.messagesIn(), s.messagesOut(), s.bytesIn(),
                s.bytesOut(), s.dropped(), s.drops(), s.connections(), s.sessions(), s.subscriptions());
    }

    private static OpsModels.Drop drop(String node, RecentDrops.Drop d) {
        return new OpsModels.Drop(node, Instant.ofEpochMilli(d.atMillis()), d.reason(), d.clientId(), d.topic());
    }

    // ------------------------------------------------------------------------ shared subscriptions

    /** A shared subscription as the cluster's state shows it. */
    private static final class Group {
        final String group;
        final String filter;
        final List<OpsModels.SharedMember> members = new ArrayList<>();
        boolean application;
        String topic;

        Group(String group, String filter) {
            this.group = group;
            this.filter = filter;
        }
    }

    @Override
    public List<OpsModels.SharedSubscription> sharedSubscriptions() {
        Map<String, Group> groups = groups();
        List<String> backlogs = groups.values().stream().filter(g -> g.application && g.topic != null)
                .map(g -> g.topic).toList();
        Map<String, OpsModels.Backlog> described = backlogs(backlogs);
        List<OpsModels.SharedSubscription> out = new ArrayList<>();
        for (Group g : groups.values()) {
            OpsModels.Backlog backlog = g.application
                    ? described.getOrDefault(g.topic, new OpsModels.Backlog(g.topic, List.of(), List.of(), 0))
                    : null;
            out.add(new OpsModels.SharedSubscription(g.group, g.filter, g.application ? "APPLICATION" : "DEVICE",
                    List.copyOf(g.members), backlog));
        }
        return out;
    }

    @Override
    public DeleteOutcome deleteSharedSubscription(String group, String topicFilter) {
        Group g = groups().get(key(group, topicFilter));
        if (g == null) {
            return DeleteOutcome.NOT_FOUND;
        }
        if (!g.members.isEmpty()) {
            return g.application ? DeleteOutcome.HAS_MEMBERS : DeleteOutcome.NOT_APPLICATION;
        }
        if (!g.application || g.topic == null) {
            return DeleteOutcome.NOT_FOUND;
        }
        await(admin.deleteTopics(List.of(g.topic)).all(), "delete the backlog topic",
                UnknownTopicOrPartitionException.class, null);
        await(admin.deleteConsumerGroups(List.of(g.topic)).all(), "delete the consumer group",
                GroupIdNotFoundException.class, null);
        Messaging m = incarnations.current();
        if (m != null) {
            m.appTopics().forgetShared(g.topic); // a member subscribing later creates it anew
        }
        return DeleteOutcome.DELETED;
    }

    /**
     * Every shared subscription, by {@link #key}: those clients subscribe to (APPLICATION when one
     * member is a persistent APPLICATION session, as the router decides), and the backlog topics in
     * Kafka that no one subscribes to any more (waiting for the grace period to end).
     */
    private Map<String, Group> groups() {
        Messaging m = incarnations.current();
        if (m == null) {
            throw new Unavailable("the node is starting; try again shortly");
        }
        Map<String, Group> groups = new LinkedHashMap<>();
        m.directory().all().forEach(state -> {
            for (Subscription s : m.subscriptions().subscriptionsOf(state.clientId())) {
                if (s.shareGroup() == null) {
                    continue;
                }
                Group g = groups.computeIfAbsent(key(s.shareGroup(), s.topicFilter()),
                        k -> new Group(s.shareGroup(), s.topicFilter()));
                g.members.add(new OpsModels.SharedMember(state.clientId(), state.nodeId(), state.connected()));
                g.application |= SessionDirectory.persistentApplication(state);
            }
        });
        Map<String, Group> byTopic = new HashMap<>();
        for (Group g : groups.values()) {
            g.topic = topics.appShared(g.group, g.filter);
            byTopic.put(g.topic, g);
        }
        for (String name : sharedTopics()) {
            Group g = byTopic.get(name);
            if (g != null) {
                g.application = true; // its backlog is still there (members may come back within the grace)
                continue;
            }
            String[] named = decode(name);
            if (named != null) {
                Group orphan = groups.computeIfAbsent(key(named[0], named[1]), k -> new Group(named[0], named[1]));
                orphan.application = true;
                orphan.topic = name;
            }
        }
        return groups;
    }

    private static String key(String group, String filter) {
        return group + "\u0000" + filter;
    }

    private Set<String> sharedTopics() {
        String prefix = topics.appSharedPrefix();
        return await(admin.listTopics().names()).stream().filter(n -> n.startsWith(prefix))
                .collect(java.util.stream.Collectors.toSet());
    }

    /**
     * The group and filter a backlog topic was named for ({@link BrokerTopics#appShared}), or null
     * when the name was shortened to fit Kafka and cannot be read back.
     */
    private String[] decode(String name) {
        String rest = name.substring(topics.appSharedPrefix().length());
        String[] parts = rest.split("\\.", -1);
        if (parts.length != 2) {
            return null;
        }
        String group = unescape(parts[0]);
        String filter = unescape(parts[1]);
        if (group == null || filter == null || !topics.appShared(group, filter).equals(name)) {
            return null;
        }
        return new String[] {group, filter};
    }

    private static String unescape(String s) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '_') {
                try {
                    bytes.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                } catch (NumberFormatException | IndexOutOfBoundsException e) {
                    return null;
                }
                i += 2;
            } else {
                bytes.write(c);
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** Partitions, end offsets, the group's positions and readers of each backlog topic that exists. */
    private Map<String, OpsModels.Backlog> backlogs(List<String> names) {
        if (names.isEmpty()) {
            return Map.of();
        }
        Set<String> existing = sharedTopics();
        List<String> present = names.stream().filter(existing::contains).toList();
        if (present.isEmpty()) {
            return Map.of();
        }
        Map<String, TopicDescription> descriptions = await(admin.describeTopics(present).allTopicNames());
        Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
        descriptions.values().forEach(d -> d.partitions().forEach(
                p -> ends.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest())));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> endOffsets = await(admin.listOffsets(ends).all());
        Map<String, OpsModels.Backlog> out = new HashMap<>();
        for (String topic : present) {
            // No group yet (no member ever read) is no position and no readers.
            Map<TopicPartition, OffsetAndMetadata> committed = orElse(
                    admin.listConsumerGroupOffsets(topic).partitionsToOffsetAndMetadata(), Map.of());
            ConsumerGroupDescription group = orElse(admin.describeConsumerGroups(List.of(topic)).describedGroups()
                    .get(topic), null);
            List<OpsModels.PartitionLag> partitions = new ArrayList<>();
            long lag = 0;
            for (var p : descriptions.get(topic).partitions()) {
                TopicPartition tp = new TopicPartition(topic, p.partition());
                long end = endOffsets.get(tp).offset();
                OffsetAndMetadata at = committed.get(tp);
                Long position = at == null ? null : at.offset();
                // Without a position the group starts at the beginning of what the topic keeps.
                long behind = Math.max(0, end - (position == null ? 0 : position));
                lag += behind;
                partitions.add(new OpsModels.PartitionLag(p.partition(), end, position, behind));
            }
            List<OpsModels.GroupMember> members = new ArrayList<>();
            if (group != null) {
                for (MemberDescription md : group.members()) {
                    members.add(new OpsModels.GroupMember(md.consumerId(), md.clientId(), md.host(),
                            md.assignment().topicPartitions().stream().map(TopicPartition::partition).sorted()
                                    .toList()));
                }
            }
            out.put(topic, new OpsModels.Backlog(topic, partitions, members, lag));
        }
        return out;
    }

    /** As {@link #await(org.apache.kafka.common.KafkaFuture, String, Class, Object)}, with {@code absent} when Kafka knows no such group. */
    private <T> T orElse(org.apache.kafka.common.KafkaFuture<T> future, T absent) {
        return await(future, "answer", GroupIdNotFoundException.class, absent);
    }

    private <T> T await(org.apache.kafka.common.KafkaFuture<T> future) {
        return await(future, "answer", null, null);
    }

    /**
     * The future's value within the timeout; {@code absent} when it fails with {@code notThere} (the
     * thing is gone already); otherwise a 503 saying Kafka did not {@code what}.
     */
    private <T> T await(org.apache.kafka.common.KafkaFuture<T> future, String what,
            Class<? extends Throwable> notThere, T absent) {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (notThere != null && notThere.isInstance(e.getCause())) {
                return absent;
            }
            throw new Unavailable("Kafka did not " + what + ": " + e.getCause().getMessage());
        } catch (TimeoutException e) {
            throw new Unavailable("Kafka did not " + what + " in time; try again");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted");
        }
    }
}
