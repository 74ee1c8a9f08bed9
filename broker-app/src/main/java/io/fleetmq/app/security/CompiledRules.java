package io.fleetmq.app.security;

import io.fleetmq.core.security.TopicRules;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One compiled {@link TopicRules} per distinct list of rules. A fleet that shares a credential (or
 * tokens carrying the same rules) holds its rules once instead of once per connection: compiled
 * rules are immutable, and an idle connection's memory is what limits connections per node.
 */
final class CompiledRules {

    /** Distinct lists kept; beyond, the cache is emptied (rules are cheap to compile again). */
    static final int MAX_ENTRIES = 10_000;

    private final Map<List<String>, TopicRules> compiled = new ConcurrentHashMap<>();

    /**
     * The rules of {@code filters}, compiled once.
     *
     * @throws IllegalArgumentException as {@link TopicRules#of(List)}; a failure is not remembered
     */
    TopicRules of(List<String> filters) {
        TopicRules known = compiled.get(filters);
        if (known != null) {
            return known;
        }
        TopicRules rules = TopicRules.of(filters);
        if (compiled.size() >= MAX_ENTRIES) {
            compiled.clear();
        }
        TopicRules raced = compiled.putIfAbsent(List.copyOf(filters), rules);
        return raced != null ? raced : rules;
    }

    int size() {
        return compiled.size();
    }
}
