package io.fleetmq.core.security;

import java.util.List;

/**
 * A credential's publish or subscribe rules: MQTT topic filters in which {@code ${clientid}} and
 * {@code ${username}} (each standing for one whole level) are replaced by the client's values. A
 * value that is empty or contains {@code +}, {@code #} or {@code /} makes that rule match nothing,
 * so a client cannot widen its rights by choosing its client ID or user name (no wildcard
 * injection). No rules: nothing is allowed.
 */
public final class TopicRules {

    private TopicRules() {
        throw new UnsupportedOperationException("stub");
    }

    /** Compiles {@code filters}; each must pass {@link #validate(String)}. */
    public static TopicRules of(List<String> filters) {
        throw new UnsupportedOperationException("stub");
    }

    /** Null if {@code filter} is a valid rule, else a one-line reason (for a 400 answer). */
    public static String validate(String filter) {
        throw new UnsupportedOperationException("stub");
    }

    /** Whether a PUBLISH to the topic name {@code topic} is allowed. */
    public boolean allowsPublish(String topic, String clientId, String username) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Whether a subscription to {@code filter} is allowed: some rule must match every topic the
     * filter matches (a rule {@code a/+} allows {@code a/b} and {@code a/+}, not {@code a/#}). A shared
     * subscription {@code $share/<group>/<filter>} is checked on its filter.
     */
    public boolean allowsSubscribe(String filter, String clientId, String username) {
        throw new UnsupportedOperationException("stub");
    }

    public boolean isEmpty() {
        throw new UnsupportedOperationException("stub");
    }
}
