package io.fleetmq.kafka.app;

import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.supervise.LoopSupervisor;
import java.util.List;
import java.util.function.Consumer;

/** Opens the backlog of a connected persistent APPLICATION client. */
public final class AppBacklogs {

    private final KafkaClients clients;
    private final AppTopics topics;

    private final LoopSupervisor supervisor;
    /** The backlogs open now, for their lag. */
    private final java.util.Set<AppBacklog> open = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Each backlog restarted by a supervisor of its own that nobody watches; see the other constructor. */
    public AppBacklogs(KafkaClients clients, AppTopics topics) {
        this(clients, topics, null);
    }

    /** @param supervisor restarts a backlog's reader after an unexpected failure and is told if it gives up */
    public AppBacklogs(KafkaClients clients, AppTopics topics, LoopSupervisor supervisor) {
        this.clients = clients;
        this.topics = topics;
        this.supervisor = supervisor;
    }

    /**
     * @param sink      receives the records, on the backlog's thread
     * @param newSession the session has just been created: what the topic held before belongs to an
     *                   earlier session of the client ID and is skipped
     */
    public AppBacklog open(String clientId, Consumer<List<AppBacklog.Record>> sink, boolean newSession) {
        AppBacklog backlog = new AppBacklog(clients, topics.topic(clientId), topics.group(clientId), sink,
                newSession ? System.currentTimeMillis() - 1_000 : -1).supervisedBy(supervisor);
        tracked(backlog);
        backlog.start();
        return backlog;
    }

    /**
     * Joins the readers of the shared subscription {@code $share/<group>/<filter>}'s backlog.
     *
     * @param revoked told (on the backlog's thread) of partitions this member no longer reads
     */
    public AppBacklog openShared(String group, String topicFilter, Consumer<List<AppBacklog.Record>> sink,
            Consumer<java.util.Set<Integer>> revoked) {
        AppBacklog backlog = AppBacklog.sharedMember(clients, topics.sharedTopic(group, topicFilter), sink, revoked)
                .supervisedBy(supervisor);
        tracked(backlog);
        backlog.start();
        return backlog;
    }

    private void tracked(AppBacklog backlog) {
        open.add(backlog);
        backlog.onClose(() -> open.remove(backlog));
    }

    /**
     * Records the node's open APPLICATION backlogs (own and shared) have not handed to their
     * sessions yet, summed; each as of its last poll, so reading this costs one pass over the open
     * backlogs and nothing of Kafka.
     */
    public long lag() {
        long sum = 0;
        for (AppBacklog b : open) {
            sum += b.lag();
        }
        return sum;
    }

    /** The open backlogs' largest lag; see {@link #lag()}. */
    public long largestLag() {
        long max = 0;
        for (AppBacklog b : open) {
            max = Math.max(max, b.lag());
        }
        return max;
    }

    /** See {@link AppTopics#ensureAsync}. */
    public java.util.concurrent.CompletableFuture<Boolean> ensure(String clientId) {
        return topics.ensureAsync(clientId);
    }

    /** See {@link AppTopics#ensureSharedAsync}. */
    public java.util.concurrent.CompletableFuture<Boolean> ensureSharedAsync(String group, String topicFilter) {
        return topics.ensureSharedAsync(group, topicFilter);
    }

    /** Whether this node made or found the shared subscription's backlog topic. */
    public boolean sharedKnown(String group, String topicFilter) {
        return topics.sharedKnown(group, topicFilter);
    }

}
