package io.fleetmq.core.subscription;

import java.util.Objects;

/**
 * Identifies one shared subscription: the sessions subscribed to {@code $share/group/topicFilter}.
 * The same group name with another filter is another shared subscription (MQTT 5.0 section
 * 4.8.2), with its own members and its own turn-taking.
 */
public record SharedGroupKey(String group, String topicFilter) {

    public SharedGroupKey {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(topicFilter, "topicFilter");
    }
}
