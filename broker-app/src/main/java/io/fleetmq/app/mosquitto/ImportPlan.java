package io.fleetmq.app.mosquitto;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What Mosquitto's files say, in this broker's terms: one basic credential per user with its hash and
 * rules, the anonymous clients' rules, and every line that could not be carried over and why.
 */
final class ImportPlan {

    /** One user: a stored hash (or a plain password to hash), a client ID it is bound to, and its rules. */
    static final class User {
        final String username;
        String clientId;
        String hash;
        String plainPassword;
        final Set<String> publish = new LinkedHashSet<>();
        final Set<String> subscribe = new LinkedHashSet<>();
        /** Whether some ACL source spoke about this user; if none did, Mosquitto lets it do everything. */
        boolean hasRules;

        User(String username) {
            this.username = username;
        }
    }

    final Map<String, User> users = new LinkedHashMap<>();
    final Set<String> anonymousPublish = new LinkedHashSet<>();
    final Set<String> anonymousSubscribe = new LinkedHashSet<>();
    /** Whether the anonymous rules come from a file (else they are left as configured). */
    boolean anonymousRulesGiven;
    final List<String> untranslated = new ArrayList<>();

    User user(String name) {
        return users.computeIfAbsent(name, User::new);
    }

    void skip(String where, String why) {
        String line = where + ": " + why;
        if (!untranslated.contains(line)) {
            untranslated.add(line); // a pattern is tried for every user; it is reported once
        }
    }
}
