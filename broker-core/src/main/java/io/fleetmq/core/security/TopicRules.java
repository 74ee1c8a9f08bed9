package io.fleetmq.core.security;

import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.SharedSubscription;
import io.fleetmq.core.topic.TopicNames;
import java.util.List;
import java.util.Objects;

/**
 * A credential's publish or subscribe rules: MQTT topic filters in which {@code ${clientid}},
 * {@code ${username}} and {@code ${cn}} (each standing for one whole level) are replaced by the
 * client's values. A
 * value that is empty or contains {@code +}, {@code #} or {@code /} makes that rule match nothing,
 * so a client cannot widen its rights by choosing its client ID or user name (no wildcard
 * injection). No rules: nothing is allowed.
 *
 * <p>Placeholders:
 * <ul>
 *   <li>{@code ${clientid}}, {@code ${username}} and {@code ${cn}} must each be a whole level
 *       ({@code devices/${clientid}/telemetry}, {@code ${username}/#}); {@code a${clientid}} is invalid.
 *   <li>A value that is null, empty, or not a valid single level (contains {@code /}, {@code +},
 *       {@code #} or U+0000) makes the rule that uses it match nothing; the other rules still apply.
 *   <li>A placeholder in the first level does not match a value starting with {@code $}: a client
 *       named {@code $SYS} does not reach the server's {@code $} topics through {@code ${clientid}/#}.
 *   <li>{@code ${cn}} is the subject common name of the client's own TLS certificate (the leaf of the
 *       chain it presented); a client without one has none, so a rule using it matches nothing.
 *   <li>Any other {@code ${...}} is invalid.
 * </ul>
 *
 * <p>A rule is a plain filter, never {@code $share/...}: a shared subscription is checked on the
 * filter inside it, so a rule naming the share itself would never match.
 *
 * <p><b>Deny rules.</b> A rule written with a leading {@code !} ({@code !secret/#}) denies, and a deny
 * rule wins over every allow rule, whatever their order (Mosquitto's {@code deny} lines mean the same).
 * A PUBLISH is refused when a deny rule matches its topic. A subscription is refused when its filter
 * <em>overlaps</em> a deny rule, that is when some topic could match both: subscriptions are checked
 * once, not per delivered message, so {@code #} is refused beside {@code !secret/#} rather than
 * delivering the secret topics. A placeholder in a deny rule whose value cannot stand for a level
 * (absent, empty, holding a wildcard or separator, or {@code $}-prefixed in the first level) matches
 * any one level there instead of nothing: a deny fails closed. Deny rules alone allow nothing. A topic
 * level that really starts with {@code !} can still be allowed by {@code +} at that level.
 *
 * <p>Rules are split into levels once; checking a PUBLISH walks the strings in place without
 * allocating. Instances are immutable and safe to share between threads.
 */
public final class TopicRules {

    /** No rules: nothing is allowed. */
    public static final TopicRules NONE = new TopicRules(List.of(), new Rule[0]);

    static final String CLIENT_ID_PLACEHOLDER = "${clientid}";
    static final String USERNAME_PLACEHOLDER = "${username}";
    static final String CN_PLACEHOLDER = "${cn}";

    // Kinds of a compiled rule level.
    private static final byte LITERAL = 0;
    private static final byte SINGLE = 1;
    private static final byte MULTI = 2;
    private static final byte CLIENT_ID = 3;
    private static final byte USERNAME = 4;
    private static final byte COMMON_NAME = 5;

    /** The prefix that makes a rule a deny rule. */
    public static final String DENY_PREFIX = "!";

    private final List<String> filters;
    private final Rule[] rules;
    private final Rule[] denies;

    private TopicRules(List<String> filters, Rule[] rules) {
        this(filters, rules, new Rule[0]);
    }

    private TopicRules(List<String> filters, Rule[] rules, Rule[] denies) {
        this.filters = filters;
        this.rules = rules;
        this.denies = denies;
    }

    /**
     * Compiles {@code filters}; each must pass {@link #validate(String)}.
     *
     * @throws IllegalArgumentException naming the first invalid filter and why
     */
    public static TopicRules of(List<String> filters) {
        Objects.requireNonNull(filters, "filters");
        if (filters.isEmpty()) {
            return NONE;
        }
        List<String> copy = List.copyOf(filters);
        List<Rule> allows = new java.util.ArrayList<>(copy.size());
        List<Rule> denies = new java.util.ArrayList<>();
        for (String filter : copy) {
            String reason = validate(filter);
            if (reason != null) {
                throw new IllegalArgumentException(reason);
            }
            if (filter.startsWith(DENY_PREFIX)) {
                denies.add(compile(filter.substring(DENY_PREFIX.length()), true));
            } else {
                allows.add(compile(filter, false));
            }
        }
        return new TopicRules(copy, allows.toArray(Rule[]::new), denies.toArray(Rule[]::new));
    }

    /**
     * Null if {@code filter} is a valid rule, else a one-line reason (for a 400 answer) that quotes
     * the filter, so a caller only has to say which field it came from.
     */
    public static String validate(String filter) {
        if (filter == null || filter.isEmpty()) {
            return "a rule must not be empty";
        }
        if (filter.startsWith(DENY_PREFIX)) {
            String denied = filter.substring(DENY_PREFIX.length());
            if (denied.isEmpty()) {
                return "rule '!': a deny rule needs a topic filter after '!'";
            }
            if (denied.startsWith(DENY_PREFIX)) {
                return "rule '" + shorten(filter) + "': only one '!' may start a deny rule";
            }
            return validate(denied);
        }
        try {
            TopicNames.validateTopicFilter(filter);
        } catch (InvalidTopicException e) {
            return "rule '" + shorten(filter) + "': " + e.getMessage();
        }
        if (filter.startsWith(SharedSubscription.PREFIX)) {
            return "rule '" + shorten(filter) + "': a rule is a plain topic filter;"
                    + " a shared subscription is checked on the filter after '$share/<group>/'";
        }
        for (String level : TopicNames.levels(filter)) {
            int open = level.indexOf("${");
            if (open < 0) {
                continue;
            }
            if (isPlaceholder(level)) {
                continue;
            }
            int close = level.indexOf('}', open);
            if (close < 0) {
                return "rule '" + shorten(filter) + "': '${' in '" + level + "' starts a placeholder that is not"
                        + " closed with '}'";
            }
            if (open == 0 && close == level.length() - 1) {
                return "rule '" + shorten(filter) + "': unknown placeholder '" + level
                        + "' (known: ${clientid}, ${username}, ${cn})";
            }
            return "rule '" + shorten(filter) + "': a placeholder must be a whole topic level"
                    + " (like 'devices/${clientid}/telemetry'), not part of '" + level + "'";
        }
        return null;
    }

    /**
     * Whether a PUBLISH to the topic name {@code topic} is allowed: some rule, with its placeholders
     * replaced, matches it as a subscription filter would ({@code a/#} matches {@code a}; a rule
     * starting with a wildcard does not match a topic starting with {@code $}, except the rule
     * {@code #} alone, which matches everything). The topic is assumed
     * valid (the session checks it first); one holding a wildcard is never allowed.
     */
    public boolean allowsPublish(String topic, String clientId, String username) {
        return allowsPublish(topic, clientId, username, null);
    }

    /**
     * {@link #allowsPublish(String, String, String)} for a client whose certificate has the subject
     * common name {@code commonName} (null: none, so rules using {@code ${cn}} match nothing).
     */
    public boolean allowsPublish(String topic, String clientId, String username, String commonName) {
        if (rules.length == 0 || topic == null || topic.isEmpty()
                || topic.indexOf(TopicNames.SINGLE_LEVEL) >= 0 || topic.indexOf(TopicNames.MULTI_LEVEL) >= 0) {
            return false;
        }
        String id = usableValue(clientId);
        String user = usableValue(username);
        String cn = usableValue(commonName);
        for (Rule deny : denies) {
            if (deny.matchesTopic(topic, id, user, cn)) {
                return false;
            }
        }
        for (Rule rule : rules) {
            if (rule.matchesTopic(topic, id, user, cn)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a subscription to {@code filter} is allowed: some rule must match every topic the
     * filter matches (a rule {@code a/+} allows {@code a/b} and {@code a/+}, not {@code a/#}). A shared
     * subscription {@code $share/<group>/<filter>} is checked on its filter. An invalid filter is
     * never allowed.
     *
     * <p>Level by level: a literal rule level (or a placeholder's value) covers only the same literal;
     * {@code +} covers a literal or {@code +}; {@code #} covers the rest of the filter, whatever it is,
     * and also its parent level ({@code a/#} allows {@code a}); a filter {@code a/#} therefore needs a
     * rule with {@code #} at that level. As with matching, a rule starting with
     * a wildcard does not cover a filter whose first level is a literal starting with {@code $}
     * (rule {@code +/#} does not allow {@code $SYS/#}); a filter starting with a wildcard matches no
     * such topic, so nothing is lost there. The rule {@code #} alone allows everything, {@code $}
     * topics too: it is how an operator says "no restriction".
     */
    public boolean allowsSubscribe(String filter, String clientId, String username) {
        return allowsSubscribe(filter, clientId, username, null);
    }

    /**
     * {@link #allowsSubscribe(String, String, String)} for a client whose certificate has the subject
     * common name {@code commonName} (null: none, so rules using {@code ${cn}} match nothing).
     */
    public boolean allowsSubscribe(String filter, String clientId, String username, String commonName) {
        if (rules.length == 0 || filter == null) {
            return false;
        }
        String plain;
        try {
            SharedSubscription share = SharedSubscription.parse(filter);
            if (share != null) {
                plain = share.filter();
            } else {
                TopicNames.validateTopicFilter(filter);
                plain = filter;
            }
        } catch (InvalidTopicException e) {
            return false;
        }
        String id = usableValue(clientId);
        String user = usableValue(username);
        String cn = usableValue(commonName);
        for (Rule deny : denies) {
            if (deny.overlapsFilter(plain, id, user, cn)) {
                return false;
            }
        }
        for (Rule rule : rules) {
            if (rule.coversFilter(plain, id, user, cn)) {
                return true;
            }
        }
        return false;
    }

    /** Whether there are no allow rules, so nothing is allowed. */
    public boolean isEmpty() {
        return rules.length == 0;
    }

    /** Whether some rule is a deny rule. */
    public boolean hasDenyRules() {
        return denies.length > 0;
    }

    /** The rules as written. */
    public List<String> filters() {
        return filters;
    }

    @Override
    public String toString() {
        return "TopicRules" + filters;
    }

    private static boolean isPlaceholder(String level) {
        return level.equals(CLIENT_ID_PLACEHOLDER) || level.equals(USERNAME_PLACEHOLDER)
                || level.equals(CN_PLACEHOLDER);
    }

    private static Rule compile(String filter, boolean deny) {
        String[] levels = TopicNames.levels(filter);
        byte[] kinds = new byte[levels.length];
        for (int i = 0; i < levels.length; i++) {
            String level = levels[i];
            if (level.length() == 1 && level.charAt(0) == TopicNames.SINGLE_LEVEL) {
                kinds[i] = SINGLE;
            } else if (level.length() == 1 && level.charAt(0) == TopicNames.MULTI_LEVEL) {
                kinds[i] = MULTI;
            } else if (level.equals(CLIENT_ID_PLACEHOLDER)) {
                kinds[i] = CLIENT_ID;
            } else if (level.equals(USERNAME_PLACEHOLDER)) {
                kinds[i] = USERNAME;
            } else if (level.equals(CN_PLACEHOLDER)) {
                kinds[i] = COMMON_NAME;
            } else {
                kinds[i] = LITERAL;
            }
        }
        return new Rule(kinds, levels, deny);
    }

    /**
     * The value itself if it can stand for one topic level, else null (so rules using it match
     * nothing): not empty, no separator, no wildcard, no U+0000. Values are compared with one
     * level as text and never read as a filter, so this check is a second guard, not the only one.
     */
    static String usableValue(String value) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == TopicNames.SEPARATOR || c == TopicNames.SINGLE_LEVEL || c == TopicNames.MULTI_LEVEL
                    || c == '\u0000') {
                return null;
            }
        }
        return value;
    }

    private static String shorten(String filter) {
        return filter.length() <= 100 ? filter : filter.substring(0, 100) + "...";
    }

    /** One compiled rule: a kind per level, and the literal text where the kind is LITERAL. */
    private static final class Rule {

        private final byte[] kinds;
        private final String[] texts;
        private final boolean deny;

        Rule(byte[] kinds, String[] texts, boolean deny) {
            this.kinds = kinds;
            this.texts = texts;
            this.deny = deny;
        }

        /**
         * Whether level {@code i} matches any one level: a {@code +}, or (deny rules only, which fail
         * closed) a placeholder whose value cannot be used.
         */
        private boolean anyLevel(int i, String clientId, String username, String commonName) {
            return kinds[i] == SINGLE
                    || deny && kinds[i] != LITERAL && literal(i, clientId, username, commonName) == null;
        }

        /** What the rule's level {@code i} must equal, or null if it matches nothing. */
        private String literal(int i, String clientId, String username, String commonName) {
            String value = switch (kinds[i]) {
                case LITERAL -> texts[i];
                case CLIENT_ID -> clientId;
                case USERNAME -> username;
                case COMMON_NAME -> commonName;
                default -> null;
            };
            if (value != null && i == 0 && kinds[i] != LITERAL && value.charAt(0) == '$') {
                return null; // a client's name must not lead into the server's '$' topics
            }
            return value;
        }

        /**
         * Whether the rule cannot reach '$' topics: it starts with a wildcard [MQTT-4.7.2-1], and is
         * not the rule {@code #} alone, which an operator writes to mean "everything".
         */
        private boolean startsWithWildcard() {
            return kinds[0] == SINGLE || kinds[0] == MULTI && kinds.length > 1;
        }

        /** Whether the rule matches the topic name, like TopicNames.matches but level by level. */
        boolean matchesTopic(String topic, String clientId, String username, String commonName) {
            if (startsWithWildcard() && topic.charAt(0) == '$') {
                return false; // [MQTT-4.7.2-1]
            }
            int t = 0; // start of the topic's current level
            int length = topic.length();
            for (int i = 0; i < kinds.length; i++) {
                if (kinds[i] == MULTI) {
                    return true; // the rest, and the parent level reached here
                }
                if (t > length) {
                    return false; // the topic has no level i, and only '#' (above) matches none
                }
                int end = topic.indexOf(TopicNames.SEPARATOR, t);
                if (end < 0) {
                    end = length;
                }
                if (!anyLevel(i, clientId, username, commonName)) {
                    String expected = literal(i, clientId, username, commonName);
                    if (expected == null || expected.length() != end - t
                            || !topic.regionMatches(t, expected, 0, expected.length())) {
                        return false;
                    }
                }
                t = end + 1;
            }
            return t > length; // every level of the topic was matched
        }

        /** Whether every topic the (valid, unshared) filter matches is matched by this rule. */
        boolean coversFilter(String filter, String clientId, String username, String commonName) {
            if (startsWithWildcard() && filter.charAt(0) == '$') {
                return false; // the filter matches '$' topics, which this rule cannot [MQTT-4.7.2-1]
            }
            int f = 0;
            int length = filter.length();
            for (int i = 0; i < kinds.length; i++) {
                if (kinds[i] == MULTI) {
                    return true;
                }
                if (f > length) {
                    return false; // the rule needs a level the filter's topics do not have
                }
                int end = filter.indexOf(TopicNames.SEPARATOR, f);
                if (end < 0) {
                    end = length;
                }
                boolean filterMulti = end - f == 1 && filter.charAt(f) == TopicNames.MULTI_LEVEL;
                boolean filterSingle = end - f == 1 && filter.charAt(f) == TopicNames.SINGLE_LEVEL;
                if (filterMulti) {
                    // '#' matches any levels from here, and the parent level too, which only a
                    // rule '#' here covers (handled above). When the parent would be the empty
                    // topic name (filter '#' or '/#'), no such topic exists, so '+/#' covers it too.
                    return f <= 1 && kinds.length == i + 2 && kinds[i] == SINGLE && kinds[i + 1] == MULTI;
                }
                if (kinds[i] != SINGLE) {
                    String expected = literal(i, clientId, username, commonName);
                    if (filterSingle || expected == null || expected.length() != end - f
                            || !filter.regionMatches(f, expected, 0, expected.length())) {
                        return false;
                    }
                }
                f = end + 1;
            }
            return f > length; // the filter has no more levels than the rule
        }

        /**
         * Whether some topic matches both this rule and the (valid, unshared) filter: level by level,
         * a wildcard on either side meets anything, literals must be equal, and {@code #} on either
         * side ends the walk with a match (it also matches its parent level).
         */
        boolean overlapsFilter(String filter, String clientId, String username, String commonName) {
            if (startsWithWildcard() && filter.charAt(0) == '$') {
                return false; // the filter's topics are '$' topics, which this rule cannot match
            }
            int f = 0;
            int length = filter.length();
            for (int i = 0; i < kinds.length; i++) {
                if (kinds[i] == MULTI) {
                    return true;
                }
                if (f > length) {
                    return false; // the filter's topics end before the rule's do
                }
                int end = filter.indexOf(TopicNames.SEPARATOR, f);
                if (end < 0) {
                    end = length;
                }
                boolean filterMulti = end - f == 1 && filter.charAt(f) == TopicNames.MULTI_LEVEL;
                boolean filterSingle = end - f == 1 && filter.charAt(f) == TopicNames.SINGLE_LEVEL;
                if (!anyLevel(i, clientId, username, commonName)) {
                    String expected = literal(i, clientId, username, commonName);
                    if (expected == null) {
                        return false;
                    }
                    if (filterMulti || filterSingle) {
                        if (i == 0 && expected.charAt(0) == '$') {
                            return false; // a filter starting with a wildcard matches no '$' topic
                        }
                        if (filterMulti) {
                            return true;
                        }
                    } else if (expected.length() != end - f
                            || !filter.regionMatches(f, expected, 0, expected.length())) {
                        return false;
                    }
                } else if (filterMulti) {
                    return true;
                }
                f = end + 1;
            }
            if (f > length) {
                return true; // same number of levels, all met
            }
            // The rule has ended; only a filter that ends in '#' here still matches the same topic.
            return length - f == 1 && filter.charAt(f) == TopicNames.MULTI_LEVEL;
        }
    }
}
