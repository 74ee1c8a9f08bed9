package io.fleetmq.core.subscription;

import io.fleetmq.core.topic.SharedSubscription;
import io.fleetmq.core.topic.TopicNames;
import java.util.Objects;

/**
 * One subscription of one session, with the options of its SUBSCRIBE (MQTT 5.0 section 3.8.3.1).
 * Immutable, so the trie can hand the same instance to many publish threads; a change of options
 * is a new instance that replaces the old one [MQTT-3.8.4-3].
 *
 * <p>The constructor rejects what a decoded SUBSCRIBE could never carry, so an instance read back
 * from the cluster's {@code subscriptions} topic is as trustworthy as one built from a packet.
 *
 * @param clientId          the session's client identifier
 * @param topicFilter       the filter to match, without the {@code $share/group/} prefix
 * @param shareGroup        the ShareName of a shared subscription, {@code null} if not shared
 * @param qos               the Maximum QoS granted, 0 to 2
 * @param noLocal           do not deliver the client's own publications; never set when shared
 * @param retainAsPublished forward the RETAIN flag as published instead of clearing it
 * @param retainHandling    when to send retained messages on subscribe, 0 to 2
 * @param subscriptionId    the Subscription Identifier, 0 when the client gave none
 * @param nodeId            the node the session lives on; may be {@code null} on a single node
 */
public record Subscription(
        String clientId,
        String topicFilter,
        String shareGroup,
        int qos,
        boolean noLocal,
        boolean retainAsPublished,
        int retainHandling,
        int subscriptionId,
        String nodeId) {

    /** Largest Subscription Identifier, the largest Variable Byte Integer. */
    public static final int MAX_SUBSCRIPTION_ID = 268_435_455;

    /**
     * @throws io.fleetmq.core.topic.InvalidTopicException if the filter or share group is invalid
     * @throws IllegalArgumentException if an option is out of its range
     */
    public Subscription {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(topicFilter, "topicFilter");
        if (shareGroup != null) {
            new SharedSubscription(shareGroup, topicFilter); // validates both parts
            if (noLocal) {
                // [MQTT-3.8.3-4]
                throw new IllegalArgumentException("No Local must not be set on a shared subscription");
            }
        } else {
            TopicNames.validateTopicFilter(topicFilter);
        }
        if (qos < 0 || qos > 2) {
            throw new IllegalArgumentException("QoS must be 0, 1 or 2, was " + qos);
        }
        if (retainHandling < 0 || retainHandling > 2) {
            throw new IllegalArgumentException("Retain Handling must be 0, 1 or 2, was " + retainHandling);
        }
        if (subscriptionId < 0 || subscriptionId > MAX_SUBSCRIPTION_ID) {
            throw new IllegalArgumentException("Subscription Identifier must be 1 to "
                    + MAX_SUBSCRIPTION_ID + " (or 0 for none), was " + subscriptionId);
        }
    }

    public boolean isShared() {
        return shareGroup != null;
    }
}
