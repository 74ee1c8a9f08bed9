package io.fleetmq.app.mosquitto;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.core.security.TopicRules;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads Mosquitto's password file, ACL file and dynamic-security JSON into an {@link ImportPlan}.
 * Malformed input throws with file and line; input that is well formed but has no equivalent here is
 * listed in the plan's report instead, and never widened: when only an approximation exists, it is the
 * stricter one.
 */
final class MosquittoFiles {

    private MosquittoFiles() {
    }

    /** {@code user:hash} lines; a value that is not a {@code $6$}/{@code $7$}/bcrypt hash is a plain password. */
    static void readPasswd(Path file, ImportPlan plan) {
        List<String> lines = lines(file);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            String where = file + ":" + (i + 1);
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new MosquittoFileException(where, "expected 'username:password-hash'");
            }
            String name = line.substring(0, colon);
            String value = line.substring(colon + 1);
            if (value.isEmpty()) {
                throw new MosquittoFileException(where, "user '" + name + "' has an empty password");
            }
            ImportPlan.User user = plan.user(name);
            if (value.startsWith("$7$") || value.startsWith("$6$") || value.matches("\\$2[aby]\\$.*")) {
                user.hash = value;
            } else {
                user.plainPassword = value;
            }
        }
    }

    /**
     * {@code topic}, {@code user} and {@code pattern} lines. Topic lines before any user line are the
     * anonymous clients'; patterns apply to every user (and to anonymous clients when they need no
     * user name).
     */
    static void readAcl(Path file, ImportPlan plan) {
        List<String> lines = lines(file);
        plan.anonymousRulesGiven = true;
        for (ImportPlan.User u : plan.users.values()) {
            u.hasRules = true; // with an ACL file, a user without lines may do nothing
        }
        List<String[]> patterns = new ArrayList<>(); // access, filter, where
        ImportPlan.User current = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            String where = file + ":" + (i + 1);
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] words = line.split("\\s+", 2);
            String keyword = words[0];
            String rest = words.length > 1 ? words[1].strip() : "";
            switch (keyword) {
                case "user" -> {
                    if (rest.isEmpty()) {
                        throw new MosquittoFileException(where, "'user' needs a user name");
                    }
                    current = plan.user(rest);
                    current.hasRules = true;
                    if (current.hash == null && current.plainPassword == null) {
                        plan.skip(where, "user '" + rest + "' is not in the password file; imported without"
                                + " password would let anyone in, so it is left out");
                        plan.users.remove(rest);
                        current = new ImportPlan.User(rest); // collects its lines, which go nowhere
                    }
                }
                case "topic", "pattern" -> {
                    String[] access = accessAndFilter(rest, where, keyword);
                    if (keyword.equals("pattern")) {
                        patterns.add(new String[] {access[0], access[1], where});
                    } else if (current == null) {
                        addRule(plan, null, access[0], access[1], where, false);
                    } else {
                        addRule(plan, current, access[0], access[1], where, false);
                    }
                }
                default -> throw new MosquittoFileException(where, "unknown keyword '" + keyword
                        + "' (expected topic, user or pattern)");
            }
        }
        for (String[] p : patterns) {
            for (ImportPlan.User u : plan.users.values()) {
                addRule(plan, u, p[0], p[1], p[2], true);
            }
            if (p[1].contains("%u") && "deny".equals(p[0])) {
                plan.skip(p[2], "deny pattern with %u not applied to anonymous clients (they have no user name,"
                        + " so Mosquitto skips it for them)");
            } else if (!p[1].contains("%u")) {
                addRule(plan, null, p[0], p[1], p[2], true);
            }
        }
    }

    private static String[] accessAndFilter(String rest, String where, String keyword) {
        if (rest.isEmpty()) {
            throw new MosquittoFileException(where, "'" + keyword + "' needs a topic");
        }
        String[] words = rest.split("\\s+", 2);
        return switch (words[0]) {
            case "read", "write", "readwrite", "deny" -> {
                if (words.length < 2 || words[1].isBlank()) {
                    throw new MosquittoFileException(where, "'" + keyword + " " + words[0] + "' needs a topic");
                }
                yield new String[] {words[0], words[1].strip()};
            }
            default -> new String[] {"readwrite", rest};
        };
    }

    /** Adds one ACL line's rule to a user (null: anonymous), or reports why it cannot be. */
    private static void addRule(ImportPlan plan, ImportPlan.User user, String access, String filter, String where,
            boolean pattern) {
        String rule = filter;
        if (pattern) {
            rule = placeholders(filter);
            if (rule == null) {
                plan.skip(where, "'" + filter + "': %c and %u must each be a whole topic level here");
                return;
            }
        }
        if (rule.startsWith(TopicRules.DENY_PREFIX)) {
            plan.skip(where, "'" + filter + "' starts with '!', which marks a deny rule here");
            return;
        }
        String reason = TopicRules.validate(rule);
        if (reason != null) {
            plan.skip(where, reason);
            return;
        }
        if (user == null && rule.contains(",")) {
            plan.skip(where, "'" + filter + "': the anonymous rules are one comma-separated setting");
            return;
        }
        boolean deny = access.equals("deny");
        String written = deny ? TopicRules.DENY_PREFIX + rule : rule;
        boolean read = deny || access.equals("read") || access.equals("readwrite");
        boolean write = deny || access.equals("write") || access.equals("readwrite");
        if (user == null) {
            if (read) {
                plan.anonymousSubscribe.add(written);
            }
            if (write) {
                plan.anonymousPublish.add(written);
            }
        } else {
            if (read) {
                user.subscribe.add(written);
            }
            if (write) {
                user.publish.add(written);
            }
        }
    }

    /** {@code %c} and {@code %u} as whole levels become placeholders; elsewhere in a level: null. */
    static String placeholders(String filter) {
        String[] levels = filter.split("/", -1);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < levels.length; i++) {
            String level = levels[i];
            if (i > 0) {
                out.append('/');
            }
            if (level.equals("%c")) {
                out.append("${clientid}");
            } else if (level.equals("%u")) {
                out.append("${username}");
            } else if (level.contains("%c") || level.contains("%u")) {
                return null;
            } else {
                out.append(level);
            }
        }
        return out.toString();
    }

    /**
     * The dynamic-security plugin's JSON: clients with their roles and groups, roles with ACLs and
     * priorities, the anonymous group, and the default access.
     */
    static void readDynsec(Path file, ImportPlan plan) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(file, StandardCharsets.UTF_8));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new MosquittoFileException(file + ":" + e.getLocation().getLineNr(), "not valid JSON: "
                    + e.getOriginalMessage());
        } catch (IOException e) {
            throw new MosquittoFileException(file.toString(), "cannot be read: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new MosquittoFileException(file + ":1", "expected a JSON object");
        }
        JsonNode defaults = root.path("defaultACLAccess");
        boolean publishDefault = defaults.path("publishClientSend").asBoolean(false);
        boolean subscribeDefault = defaults.path("subscribe").asBoolean(false);
        if (!defaults.path("publishClientReceive").asBoolean(true)) {
            plan.skip(file + ": defaultACLAccess.publishClientReceive", "false cannot be expressed (delivery is"
                    + " not checked per message here); subscriptions decide what a client receives");
        }
        if (!defaults.path("unsubscribe").asBoolean(true)) {
            plan.skip(file + ": defaultACLAccess.unsubscribe", "unsubscribing is always allowed here");
        }
        java.util.Map<String, JsonNode> roles = new java.util.HashMap<>();
        for (JsonNode r : root.path("roles")) {
            roles.put(r.path("rolename").asText(), r);
        }
        java.util.Map<String, JsonNode> groups = new java.util.HashMap<>();
        for (JsonNode g : root.path("groups")) {
            groups.put(g.path("groupname").asText(), g);
        }
        for (JsonNode c : root.path("clients")) {
            String name = c.path("username").asText(null);
            String where = file + ": client '" + name + "'";
            if (name == null || name.isEmpty()) {
                throw new MosquittoFileException(file + ": clients", "a client without username");
            }
            if (c.path("disabled").asBoolean(false)) {
                plan.skip(where, "disabled; not imported");
                continue;
            }
            if (!c.hasNonNull("password") || !c.hasNonNull("salt") || !c.hasNonNull("iterations")) {
                plan.skip(where, "has no password; not imported");
                continue;
            }
            ImportPlan.User user = plan.user(name);
            if (user.hash != null || user.plainPassword != null) {
                plan.skip(where, "also in the password file; the dynamic-security password and rules win");
                user.publish.clear();
                user.subscribe.clear();
                user.plainPassword = null;
            }
            user.hash = "$7$" + c.path("iterations").asInt() + "$" + c.path("salt").asText() + "$"
                    + c.path("password").asText();
            user.clientId = c.hasNonNull("clientid") && !c.path("clientid").asText().isEmpty()
                    ? c.path("clientid").asText() : null;
            user.hasRules = true;
            List<JsonNode[]> acls = new ArrayList<>(); // {acl, priority of the role link}
            collectRoles(c.path("roles"), roles, acls, plan, where);
            for (JsonNode link : c.path("groups")) {
                JsonNode g = groups.get(link.path("groupname").asText());
                if (g == null) {
                    plan.skip(where, "group '" + link.path("groupname").asText() + "' is not defined");
                    continue;
                }
                collectRoles(g.path("roles"), roles, acls, plan, where);
            }
            applyAcls(acls, user.publish, user.subscribe, publishDefault, subscribeDefault, plan, where);
        }
        String anonymousGroup = root.path("anonymousGroup").asText(null);
        if (anonymousGroup != null && groups.containsKey(anonymousGroup)) {
            String where = file + ": anonymousGroup '" + anonymousGroup + "'";
            List<JsonNode[]> acls = new ArrayList<>();
            collectRoles(groups.get(anonymousGroup).path("roles"), roles, acls, plan, where);
            plan.anonymousRulesGiven = true;
            plan.anonymousPublish.clear();
            plan.anonymousSubscribe.clear();
            applyAcls(acls, plan.anonymousPublish, plan.anonymousSubscribe, publishDefault, subscribeDefault, plan,
                    where);
        }
    }

    private static void collectRoles(JsonNode links, java.util.Map<String, JsonNode> roles, List<JsonNode[]> acls,
            ImportPlan plan, String where) {
        for (JsonNode link : links) {
            JsonNode role = roles.get(link.path("rolename").asText());
            if (role == null) {
                plan.skip(where, "role '" + link.path("rolename").asText() + "' is not defined");
                continue;
            }
            for (JsonNode acl : role.path("acls")) {
                acls.add(new JsonNode[] {acl, role});
            }
        }
    }

    /**
     * ACLs to rules. Dynamic security lets a higher-priority allow override a deny; here a deny always
     * wins, so such a pair is reported (the result is stricter, never wider).
     */
    private static void applyAcls(List<JsonNode[]> acls, java.util.Set<String> publish,
            java.util.Set<String> subscribe, boolean publishDefault, boolean subscribeDefault, ImportPlan plan,
            String where) {
        Integer highestAllow = null;
        Integer lowestDeny = null;
        for (JsonNode[] pair : acls) {
            JsonNode acl = pair[0];
            String type = acl.path("acltype").asText();
            String topic = acl.path("topic").asText();
            boolean allow = acl.path("allow").asBoolean(false);
            int priority = acl.path("priority").asInt(0);
            String at = where + ", role '" + pair[1].path("rolename").asText() + "', " + type + " '" + topic + "'";
            String rule = placeholders(topic);
            if (rule == null || TopicRules.validate(rule) != null || rule.startsWith(TopicRules.DENY_PREFIX)) {
                plan.skip(at, rule == null ? "%c and %u must each be a whole topic level here"
                        : rule.startsWith(TopicRules.DENY_PREFIX) ? "starts with '!'" : TopicRules.validate(rule));
                continue;
            }
            java.util.Set<String> target;
            switch (type) {
                case "publishClientSend" -> target = publish;
                case "subscribePattern" -> target = subscribe;
                case "subscribeLiteral" -> {
                    target = subscribe;
                    if (allow && (rule.contains("+") || rule.contains("#"))) {
                        plan.skip(at, "a literal subscribe allow with wildcards would allow more here; left out");
                        continue;
                    }
                }
                case "publishClientReceive" -> {
                    if (allow) {
                        continue; // receiving is allowed unless denied; nothing to add
                    }
                    target = subscribe;
                    plan.skip(at, "receive deny approximated as a subscribe deny (subscriptions overlapping it"
                            + " are refused)");
                }
                case "unsubscribe" -> {
                    if (!allow) {
                        plan.skip(at, "unsubscribing is always allowed here");
                    }
                    continue;
                }
                default -> {
                    plan.skip(at, "unknown acltype");
                    continue;
                }
            }
            if (allow) {
                target.add(rule);
                highestAllow = highestAllow == null ? priority : Math.max(highestAllow, priority);
            } else {
                target.add(TopicRules.DENY_PREFIX + rule);
                lowestDeny = lowestDeny == null ? priority : Math.min(lowestDeny, priority);
            }
        }
        if (highestAllow != null && lowestDeny != null && highestAllow > lowestDeny) {
            plan.skip(where, "an allow has a higher priority than a deny; here every deny wins over every allow,"
                    + " so what the allow overrode stays denied");
        }
        if (publishDefault) {
            publish.add("#");
        }
        if (subscribeDefault) {
            subscribe.add("#");
        }
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new MosquittoFileException(file.toString(), "cannot be read: " + e.getMessage());
        }
    }
}
