package io.fleetmq.kafka.app;

import io.fleetmq.core.log.ClientText;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.kafka.TopicLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Creates and deletes the backlog topics of persistent APPLICATION clients. */
public final class AppTopics {

    private static final Logger log = LoggerFactory.getLogger(AppTopics.class);

    private final Admin admin;
    private final KafkaSettings settings;
    private final BrokerTopics topics;
    private final Duration retention;
    private final long retentionBytes;

    private final int sharedPartitions;
    /** Shared backlog topics known to exist: a member subscribing again costs no request to Kafka. */
    private final Set<String> sharedEnsured = ConcurrentHashMap.newKeySet();

    public AppTopics(Admin admin, KafkaSettings settings, Duration retention, long retentionBytes) {
        this(admin, settings, retention, retentionBytes, 1);
    }

    /** @param sharedPartitions partitions of a shared subscription's backlog: at most this many members read at once */
    public AppTopics(Admin admin, KafkaSettings settings, Duration retention, long retentionBytes,
            int sharedPartitions) {
        this.admin = admin;
        this.settings = settings;
        this.topics = new BrokerTopics(settings.topicPrefix());
        this.retention = retention;
        this.retentionBytes = retentionBytes;
        this.sharedPartitions = sharedPartitions;
    }

    /** The backlog topic of the shared subscription {@code $share/<group>/<filter>} of APPLICATION clients. */
    public String sharedTopic(String group, String topicFilter) {
        return topics.appShared(group, topicFilter);
    }

    /** Whether this node made or found the shared subscription's backlog topic. */
    public boolean sharedKnown(String group, String topicFilter) {
        return sharedEnsured.contains(sharedTopic(group, topicFilter));
    }

    /** As {@link #ensureShared}, without blocking. */
    public CompletableFuture<Boolean> ensureSharedAsync(String group, String topicFilter) {
        String name = sharedTopic(group, topicFilter);
        if (sharedEnsured.contains(name)) {
            return CompletableFuture.completedFuture(true);
        }
        return createAsync(new NewTopic(name, sharedPartitions, settings.replicationFactor()),
                "shared subscription $share/" + group + "/" + topicFilter).thenApply(created -> {
                    if (created) {
                        sharedEnsured.add(name);
                    }
                    return created;
                });
    }

    public String topic(String clientId) {
        return topics.app(clientId);
    }

    /** The consumer group whose committed offset is the client's position in its backlog. */
    public String group(String clientId) {
        return topics.app(clientId);
    }

    /** Creates the client's backlog topic if it is missing; false if Kafka did not. */
    public boolean ensure(String clientId) {
        return create(new NewTopic(topic(clientId), 1, settings.replicationFactor()), clientId);
    }

    /**
     * As {@link #ensure}, without blocking: completes with true once the topic exists, false if Kafka
     * did not create it within the request timeout.
     */
    public CompletableFuture<Boolean> ensureAsync(String clientId) {
        return createAsync(new NewTopic(topic(clientId), 1, settings.replicationFactor()), clientId);
    }

    private CompletableFuture<Boolean> createAsync(NewTopic topic, String owner) {
        configure(topic);
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        admin.createTopics(List.of(topic), new CreateTopicsOptions().timeoutMs((int) settings.requestTimeout().toMillis()))
                .all().whenComplete((v, e) -> {
                    Throwable cause = e instanceof ExecutionException || e instanceof CompletionException
                            ? e.getCause() : e;
                    if (cause == null) {
                        log.info("Created APPLICATION backlog {} for {}", topic.name(), owner);
                        result.complete(true);
                    } else if (cause instanceof TopicExistsException) {
                        result.complete(true);
                    } else {
                        log.warn("Cannot create the backlog topic of {}: {}", owner, cause.toString());
                        result.complete(false);
                    }
                });
        return result;
    }

    private void configure(NewTopic topic) {
        // Room for the largest record and the configured min.insync.replicas, like every topic of the broker.
        topic.configs(TopicLayout.withRecordConfigs(settings, Map.of(
                TopicConfig.RETENTION_MS_CONFIG, Long.toString(retention.toMillis()),
                TopicConfig.RETENTION_BYTES_CONFIG, Long.toString(retentionBytes))));
    }

    private boolean create(NewTopic topic, String owner) {
        configure(topic);
        try {
            admin.createTopics(List.of(topic)).all().get(settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            log.info("Created APPLICATION backlog {} for {}", topic.name(), owner);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TopicExistsException) {
                return true;
            }
            log.warn("Cannot create the backlog topic of {}: {}", owner, e.getCause().toString());
            return false;
        } catch (TimeoutException e) {
            log.warn("Kafka did not create the backlog topic of {} in time", owner);
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Deletes the client's backlog topic and its committed position: the session ended. */
    public void delete(String clientId) {
        admin.deleteTopics(List.of(topic(clientId))).all().whenComplete((v, e) -> {
            if (e != null && !(e instanceof UnknownTopicOrPartitionException)
                    && !(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                log.warn("Cannot delete the backlog topic of {}: {}", ClientText.of(clientId), e.toString());
            }
        });
        admin.deleteConsumerGroups(List.of(group(clientId))).all().whenComplete((v, e) -> {
            if (e != null && !(e instanceof GroupIdNotFoundException) && !(e.getCause() instanceof GroupIdNotFoundException)) {
                log.debug("Cannot delete the backlog position of {}: {}", clientId, e.toString());
            }
        });
    }

    /** The names of all shared subscriptions' backlog topics in Kafka (their consumer groups are named alike). */
    public CompletableFuture<Set<String>> sharedTopics() {
        String start = topics.appSharedPrefix();
        CompletableFuture<Set<String>> result = new CompletableFuture<>();
        admin.listTopics().names().whenComplete((names, e) -> {
            if (e != null) {
                result.completeExceptionally(e);
            } else {
                result.complete(names.stream().filter(n -> n.startsWith(start))
                        .collect(java.util.stream.Collectors.toUnmodifiableSet()));
            }
        });
        return result;
    }

    /**
     * This node no longer takes the shared backlog topic for granted: a member subscribing later
     * asks Kafka for it (and creates it if it was deleted meanwhile).
     */
    public void forgetShared(String name) {
        sharedEnsured.remove(name);
    }

    /** Deletes a shared subscription's backlog topic and its readers' positions: the group has no members left. */
    public void deleteShared(String name) {
        sharedEnsured.remove(name);
        log.info("Deleting the backlog {} of a shared subscription without APPLICATION members", name);
        admin.deleteTopics(List.of(name)).all().whenComplete((v, e) -> {
            if (e != null && !(e instanceof UnknownTopicOrPartitionException)
                    && !(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                log.warn("Cannot delete the shared backlog {}: {}", name, e.toString());
            }
        });
        admin.deleteConsumerGroups(List.of(name)).all().whenComplete((v, e) -> {
            if (e != null && !(e instanceof GroupIdNotFoundException) && !(e.getCause() instanceof GroupIdNotFoundException)) {
                log.debug("Cannot delete the positions of the shared backlog {}: {}", name, e.toString());
            }
        });
    }
}
