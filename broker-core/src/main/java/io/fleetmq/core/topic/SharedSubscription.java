package io.fleetmq.core.topic;

import static io.fleetmq.core.topic.InvalidTopicException.TOPIC_FILTER_INVALID;

import java.util.Objects;

/**
 * The two parts of a shared subscription's topic filter {@code $share/{group}/{filter}} (MQTT 5.0
 * section 4.8.2). The group names the set of sessions that share the messages; the filter is what
 * the subscription trie matches.
 *
 * <p>A record can only hold a well-formed share: the constructor enforces the rules, so a group
 * or filter taken from an instance needs no second check.
 */
public record SharedSubscription(String group, String filter) {

    /** What makes a topic filter a shared one [MQTT-4.8.2-1]. */
    public static final String PREFIX = "$share/";

    /** @throws InvalidTopicException if group or filter break section 4.8.2 or 4.7 */
    public SharedSubscription {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(filter, "filter");
        if (group.isEmpty()) {
            // [MQTT-4.8.2-1]
            throw new InvalidTopicException(TOPIC_FILTER_INVALID,
                    "the ShareName of a shared subscription must be at least one character long");
        }
        for (int i = 0; i < group.length(); i++) {
            char c = group.charAt(i);
            if (c == TopicNames.SEPARATOR || c == TopicNames.SINGLE_LEVEL || c == TopicNames.MULTI_LEVEL) {
                // [MQTT-4.8.2-2]
                throw new InvalidTopicException(TOPIC_FILTER_INVALID,
                        "the ShareName '" + group + "' must not contain '/', '+' or '#'");
            }
        }
        if (filter.isEmpty()) {
            // [MQTT-4.8.2-2]
            throw new InvalidTopicException(TOPIC_FILTER_INVALID,
                    "the ShareName '" + group + "' must be followed by '/' and a topic filter");
        }
        // The whole string, so the group's characters and the total length are checked too.
        TopicNames.validateTopicFilter(PREFIX + group + TopicNames.SEPARATOR + filter);
    }

    /**
     * Splits a topic filter from SUBSCRIBE or UNSUBSCRIBE.
     *
     * @return the share, or {@code null} if the filter does not start with {@code $share/} and is
     *     therefore an ordinary filter
     * @throws InvalidTopicException if it starts with {@code $share/} but is not a valid share
     */
    public static SharedSubscription parse(String rawFilter) {
        if (!rawFilter.startsWith(PREFIX)) {
            return null;
        }
        String rest = rawFilter.substring(PREFIX.length());
        int groupEnd = rest.indexOf(TopicNames.SEPARATOR);
        String group = groupEnd < 0 ? rest : rest.substring(0, groupEnd);
        String filter = groupEnd < 0 ? "" : rest.substring(groupEnd + 1);
        return new SharedSubscription(group, filter); // which rejects a missing part
    }

    /** The filter as the client wrote it, {@code $share/group/filter}. */
    public String rawFilter() {
        return PREFIX + group + TopicNames.SEPARATOR + filter;
    }
}
