package io.fleetmq.app.mosquitto;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fleetmq.persistence.auth.PasswordHashes;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * {@code import-mosquitto}: carries Mosquitto's users, passwords and ACLs into a running node through
 * its admin API. Each credential is compared with what is stored before anything is written, so a
 * second run changes nothing; {@code --dry-run} only prints the changes.
 *
 * <p>Exit codes: 0 done (lines that could not be translated are listed, not fatal); 1 the node refused
 * or could not be reached; 2 bad command line or malformed file.
 */
public final class MosquittoImport {

    static final String USAGE = """
            Usage: java -jar fleetmq.jar import-mosquitto --passwd FILE [--acl FILE] [--dynsec FILE]
                       [--dry-run] [--api URL] [--user NAME] [--password PASSWORD]
              --passwd    mosquitto_passwd file: each user becomes a basic credential keeping its hash
              --acl       acl_file: topic/user/pattern lines become rules (deny lines as deny rules)
              --dynsec    dynamic-security.json: clients, groups, roles and default access
              --dry-run   print what would change, change nothing
              --api       the node's admin API (default http://127.0.0.1:8083)
              --user, --password  admin login (default: ADMIN_USERNAME, ADMIN_PASSWORD; user admin)""";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Function<String, String> environment;
    private final PrintStream out;
    private final PrintStream err;

    public MosquittoImport(Function<String, String> environment, PrintStream out, PrintStream err) {
        this.environment = environment;
        this.out = out;
        this.err = err;
    }

    /** Runs the command line (without the subcommand itself) and returns the exit code. */
    public int run(String... args) {
        Path passwd = null;
        Path acl = null;
        Path dynsec = null;
        boolean dryRun = false;
        String api = "http://127.0.0.1:8083";
        String user = environment.apply("ADMIN_USERNAME");
        String password = environment.apply("ADMIN_PASSWORD");
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "-h", "--help" -> {
                        out.println(USAGE);
                        return 0;
                    }
                    case "--dry-run" -> dryRun = true;
                    case "--passwd" -> passwd = Path.of(value(args, i++));
                    case "--acl" -> acl = Path.of(value(args, i++));
                    case "--dynsec" -> dynsec = Path.of(value(args, i++));
                    case "--api" -> api = value(args, i++);
                    case "--user" -> user = value(args, i++);
                    case "--password" -> password = value(args, i++);
                    default -> throw new IllegalArgumentException("unexpected argument '" + a + "'");
                }
            }
            if (passwd == null && dynsec == null) {
                throw new IllegalArgumentException("--passwd (or --dynsec) is required");
            }
            if (password == null || password.isEmpty()) {
                throw new IllegalArgumentException("no admin password: --password or ADMIN_PASSWORD");
            }
        } catch (IllegalArgumentException e) {
            err.println("import-mosquitto: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        ImportPlan plan = new ImportPlan();
        try {
            if (passwd != null) {
                MosquittoFiles.readPasswd(passwd, plan);
            }
            if (acl != null) {
                MosquittoFiles.readAcl(acl, plan);
            }
            if (dynsec != null) {
                MosquittoFiles.readDynsec(dynsec, plan);
            }
        } catch (MosquittoFileException e) {
            err.println("import-mosquitto: " + e.getMessage());
            return 2;
        }
        try {
            Api client = new Api(api.replaceAll("/+$", ""), user == null || user.isEmpty() ? "admin" : user, password);
            int changes = apply(plan, client, dryRun);
            out.println((dryRun ? "Dry run: " + changes + " change(s) would be made" : changes + " change(s) made")
                    + ", " + plan.users.size() + " user(s) in the files.");
        } catch (ApiFailure e) {
            err.println("import-mosquitto: " + e.getMessage());
            report(plan);
            return 1;
        }
        report(plan);
        return 0;
    }

    private void report(ImportPlan plan) {
        if (plan.untranslated.isEmpty()) {
            out.println("Every line was translated.");
            return;
        }
        out.println("Not translated (" + plan.untranslated.size() + "):");
        for (String line : plan.untranslated) {
            out.println("  " + line);
        }
    }

    private static String value(String[] args, int i) {
        if (i + 1 >= args.length) {
            throw new IllegalArgumentException(args[i] + " needs a value");
        }
        return args[i + 1];
    }

    private int apply(ImportPlan plan, Api api, boolean dryRun) {
        int changes = 0;
        PasswordHashes hashes = new PasswordHashes();
        for (ImportPlan.User u : plan.users.values()) {
            if (u.hash == null && u.plainPassword == null) {
                continue;
            }
            List<String> publish = u.hasRules ? List.copyOf(u.publish) : List.of("#");
            List<String> subscribe = u.hasRules ? List.copyOf(u.subscribe) : List.of("#");
            JsonNode existing = api.findCredential(u.username, u.clientId);
            String who = "user '" + u.username + "'" + (u.clientId == null ? "" : " client ID '" + u.clientId + "'");
            ObjectNode body = JSON.createObjectNode();
            body.put("type", "basic");
            body.put("username", u.username);
            if (u.clientId != null) {
                body.put("clientId", u.clientId);
            }
            body.set("publish", JSON.valueToTree(publish));
            body.set("subscribe", JSON.valueToTree(subscribe));
            if (existing == null) {
                body.put("passwordHash", u.hash != null ? u.hash : hashes.hash(u.plainPassword.toCharArray()));
                out.println((dryRun ? "would create " : "create ") + who + " publish " + publish + " subscribe "
                        + subscribe);
                if (!dryRun) {
                    api.send("POST", "/api/v1/credentials", body);
                }
                changes++;
                continue;
            }
            if (!"basic".equals(existing.path("type").asText())) {
                plan.skip(who, "a " + existing.path("type").asText() + " credential already has this name; left as is");
                continue;
            }
            if (existing.hasNonNull("clientType")) {
                body.put("clientType", existing.path("clientType").asText());
            }
            List<String> reasons = new ArrayList<>();
            if (u.hash != null && !Objects.equals(fingerprint(u.hash), existing.path("passwordFingerprint").asText(null))) {
                body.put("passwordHash", u.hash);
                reasons.add("password");
            } else if (u.hash == null && !existing.path("hasPassword").asBoolean()) {
                body.put("passwordHash", hashes.hash(u.plainPassword.toCharArray()));
                reasons.add("password");
            }
            if (!publish.equals(strings(existing.path("publish")))) {
                reasons.add("publish " + strings(existing.path("publish")) + " -> " + publish);
            }
            if (!subscribe.equals(strings(existing.path("subscribe")))) {
                reasons.add("subscribe " + strings(existing.path("subscribe")) + " -> " + subscribe);
            }
            if (reasons.isEmpty()) {
                continue;
            }
            out.println((dryRun ? "would update " : "update ") + who + ": " + String.join("; ", reasons));
            if (!dryRun) {
                api.send("PUT", "/api/v1/credentials/" + existing.path("id").asText(), body);
            }
            changes++;
        }
        if (plan.anonymousRulesGiven) {
            changes += anonymous(plan, api, dryRun);
        }
        return changes;
    }

    /** The anonymous clients' rules, as the runtime settings auth.anonymous-publish and -subscribe. */
    private int anonymous(ImportPlan plan, Api api, boolean dryRun) {
        JsonNode settings = api.send("GET", "/api/v1/auth/settings", null);
        ObjectNode wanted = JSON.createObjectNode();
        String publish = String.join(",", plan.anonymousPublish);
        String subscribe = String.join(",", plan.anonymousSubscribe);
        for (JsonNode s : settings.path("settings")) {
            String key = s.path("key").asText();
            String value = s.path("value").asText("");
            if (key.equals("auth.anonymous-publish") && !value.equals(publish)) {
                wanted.put(key, publish);
            } else if (key.equals("auth.anonymous-subscribe") && !value.equals(subscribe)) {
                wanted.put(key, subscribe);
            }
        }
        if (wanted.isEmpty()) {
            return 0;
        }
        out.println((dryRun ? "would set " : "set ") + "anonymous rules: " + wanted);
        if (!dryRun) {
            ObjectNode body = JSON.createObjectNode();
            body.set("settings", wanted);
            api.send("PUT", "/api/v1/auth/settings", body);
        }
        return 1;
    }

    private static List<String> strings(JsonNode array) {
        List<String> list = new ArrayList<>();
        array.forEach(n -> list.add(n.asText()));
        return list;
    }

    private static String fingerprint(String hash) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(hash.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The node refused a request or could not be reached. */
    static final class ApiFailure extends RuntimeException {
        ApiFailure(String message) {
            super(message);
        }
    }

    /** The few admin API calls the import needs, logged in once with a bearer token. */
    private static final class Api {

        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        private final String base;
        private final String token;

        Api(String base, String user, String password) {
            this.base = base;
            ObjectNode login = JSON.createObjectNode();
            login.put("username", user);
            login.put("password", password);
            this.token = call("POST", "/api/v1/auth/login", login, null).path("token").asText();
        }

        JsonNode findCredential(String username, String clientId) {
            String path = "/api/v1/credentials?pageSize=100&username=" + URLEncoder.encode(username, StandardCharsets.UTF_8)
                    + (clientId == null ? "" : "&clientId=" + URLEncoder.encode(clientId, StandardCharsets.UTF_8));
            for (JsonNode c : send("GET", path, null).path("items")) {
                if (username.equals(c.path("username").asText(null))
                        && Objects.equals(clientId, c.path("clientId").asText(null))) {
                    return c;
                }
            }
            return null;
        }

        JsonNode send(String method, String path, JsonNode body) {
            return call(method, path, body, token);
        }

        private JsonNode call(String method, String path, JsonNode body, String bearer) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                    .timeout(Duration.ofSeconds(30)).header("Accept", "application/json");
            if (bearer != null) {
                request.header("Authorization", "Bearer " + bearer);
            }
            if (body != null) {
                request.header("Content-Type", "application/json")
                        .method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
            } else {
                request.method(method, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<String> response;
            try {
                response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new ApiFailure(method + " " + base + path + ": " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ApiFailure("interrupted");
            }
            if (response.statusCode() / 100 != 2) {
                throw new ApiFailure(method + " " + path.replaceFirst("\\?.*", "") + " answered "
                        + response.statusCode() + ": " + response.body());
            }
            try {
                return response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
            } catch (IOException e) {
                throw new ApiFailure(method + " " + path + ": the answer is not JSON");
            }
        }
    }
}
