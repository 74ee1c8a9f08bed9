package io.fleetmq.session.cluster;

import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.kafka.app.AppTopics;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the backlog topic of a shared subscription once it has had no persistent APPLICATION
 * member for the grace period (sessions.application-shared-grace): its last member's session
 * ended, or the member left the group. Nothing is routed to such a topic any more (the router sends
 * a group's messages there only while it has such a member), so it only holds what the group left
 * unread, kept for a member that comes back within the grace period.
 *
 * <p>Every node sweeps on its own, from its copies of the cluster's sessions and subscriptions; a
 * topic that another node deleted first is simply gone. A node forgets that a topic exists as soon
 * as it sees it unused, so a member subscribing later makes sure of it again.
 */
public final class SharedBacklogSweeper {

    private static final Logger log = LoggerFactory.getLogger(SharedBacklogSweeper.class);

    private final AppTopics topics;
    private final SessionDirectory directory;
    private final SubscriptionTrie subscriptions;
    private final long graceMillis;
    private final LongSupplier clock;
    private final java.util.concurrent.atomic.AtomicBoolean sweeping = new java.util.concurrent.atomic.AtomicBoolean();
    /** Topic to when this node first saw it without members; under this object's lock. */
    private final Map<String, Long> unusedSince = new HashMap<>();

    public SharedBacklogSweeper(AppTopics topics, SessionDirectory directory, SubscriptionTrie subscriptions,
            Duration grace, LongSupplier clock) {
        this.topics = topics;
        this.directory = directory;
        this.subscriptions = subscriptions;
        this.graceMillis = grace.toMillis();
        this.clock = clock;
    }

    /** How often to sweep for a grace period: a few times within it, at most once a minute. */
    public static Duration interval(Duration grace) {
        long millis = Math.max(100, Math.min(grace.toMillis() / 4, 60_000));
        return Duration.ofMillis(millis);
    }

    /**
     * Starts one sweep and returns at once: the rest runs when Kafka has listed its topics (on
     * the admin client's thread). A sweep started while the last one still waits is skipped.
     */
    public void sweep() {
        if (!sweeping.compareAndSet(false, true)) {
            return;
        }
        topics.sharedTopics().whenComplete((existing, e) -> {
            try {
                if (e != null) {
                    log.debug("No list of shared backlogs from Kafka this time: {}", e.toString());
                } else {
                    sweep(existing);
                }
            } catch (RuntimeException failure) {
                log.warn("Sweeping shared backlogs failed", failure);
            } finally {
                sweeping.set(false);
            }
        });
    }

    private synchronized void sweep(Set<String> existing) {
        Set<String> used = used();
        long now = clock.getAsLong();
        unusedSince.keySet().retainAll(existing);
        for (String name : existing) {
            if (used.contains(name)) {
                unusedSince.remove(name);
                continue;
            }
            Long since = unusedSince.get(name);
            if (since == null) {
                unusedSince.put(name, now);
                topics.forgetShared(name);
            } else if (now - since >= graceMillis) {
                unusedSince.remove(name);
                topics.deleteShared(name);
            }
        }
    }

    /** The backlog topics of shared subscriptions with a persistent APPLICATION member. */
    private Set<String> used() {
        Set<String> used = new HashSet<>();
        for (String clientId : directory.applicationClients()) {
            for (Subscription s : subscriptions.subscriptionsOf(clientId)) {
                if (s.shareGroup() != null) {
                    used.add(topics.sharedTopic(s.shareGroup(), s.topicFilter()));
                }
            }
        }
        return used;
    }
}
