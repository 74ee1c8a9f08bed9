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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
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
    /** Credentials read per request; the admin API's largest page. */
    private static final int PAGE_SIZE = 1000;
    /** Writes under way at once: enough to keep a node's admin API busy, few enough not to crowd it. */
    private static final int PARALLEL_WRITES = 8;

    private final Function<String, String> environment;
    private final PrintStream out;
    private final PrintStream err;

    /** Run once the stored credentials were read, before anything is written (tests race it). */
    private Runnable afterReading = () -> { };

    MosquittoImport afterReading(Runnable hook) {
        this.afterReading = hook;
        return this;
    }

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

    /**
     * Compares every user with what the node stores, read once in pages, and writes the differences
     * a few requests at a time: an import of tens of thousands of users costs a request per change, not
     * two requests one after another per user. A user that another client created since the pages were
     * read (the create answers 409) is compared again with what is stored then.
     */
    private int apply(ImportPlan plan, Api api, boolean dryRun) {
        PasswordHashes hashes = new PasswordHashes();
        Map<String, JsonNode> stored = api.credentialsByName();
        afterReading.run();
        List<ImportPlan.User> raced = new ArrayList<>();
        int changes = 0;
        try (Writes writes = new Writes(api, PARALLEL_WRITES)) {
            for (ImportPlan.User u : plan.users.values()) {
                Change change = change(plan, u, stored.get(key(u.username, u.clientId)), hashes);
                if (change == null) {
                    continue;
                }
                out.println((dryRun ? "would " : "") + change.line);
                changes++;
                if (!dryRun) {
                    writes.submit(change, () -> {
                        synchronized (raced) {
                            raced.add(u);
                        }
                    });
                }
            }
        }
        for (ImportPlan.User u : raced) {
            Change change = change(plan, u, api.findCredential(u.username, u.clientId), hashes);
            if (change != null) {
                out.println(change.line);
                api.send(change.method, change.path, change.body);
            } else {
                changes--; // created by someone else as the files have it
            }
        }
        if (plan.anonymousRulesGiven) {
            changes += anonymous(plan, api, dryRun);
        }
        return changes;
    }

    /** A write the import makes, and the line that reports it ("create ..." or "update ..."). */
    private record Change(String method, String path, ObjectNode body, String line) {
    }

    /** What the user needs, given the credential stored under its names (or null): null if nothing. */
    private static Change change(ImportPlan plan, ImportPlan.User u, JsonNode existing, PasswordHashes hashes) {
        if (u.hash == null && u.plainPassword == null) {
            return null;
        }
        List<String> publish = u.hasRules ? List.copyOf(u.publish) : List.of("#");
        List<String> subscribe = u.hasRules ? List.copyOf(u.subscribe) : List.of("#");
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
            return new Change("POST", "/api/v1/credentials", body,
                    "create " + who + " publish " + publish + " subscribe " + subscribe);
        }
        if (!"basic".equals(existing.path("type").asText())) {
            plan.skip(who, "a " + existing.path("type").asText() + " credential already has this name; left as is");
            return null;
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
            return null;
        }
        return new Change("PUT", "/api/v1/credentials/" + existing.path("id").asText(), body,
                "update " + who + ": " + String.join("; ", reasons));
    }

    /** The key of a credential's user name and client ID (absent: any client ID). */
    private static String key(String username, String clientId) {
        return clientId == null ? username + "\n" : username + "\n=" + clientId;
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

        /**
         * Every stored credential that has a user name, by {@link #key}: read a page of
         * the largest page at a time, in the order the node lists them (user name, client ID, ID).
         */
        Map<String, JsonNode> credentialsByName() {
            Map<String, JsonNode> byName = new HashMap<>();
            for (int page = 0; ; page++) {
                JsonNode answer = send("GET", "/api/v1/credentials?pageSize=" + PAGE_SIZE + "&page=" + page, null);
                JsonNode items = answer.path("items");
                for (JsonNode c : items) {
                    if (c.hasNonNull("username")) {
                        byName.putIfAbsent(key(c.path("username").asText(), c.path("clientId").asText(null)), c);
                    }
                }
                if (items.size() < PAGE_SIZE || (long) (page + 1) * PAGE_SIZE >= answer.path("total").asLong()) {
                    return byName;
                }
            }
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

        /** The request, sent without waiting; the answer's status is the caller's to judge. */
        CompletableFuture<HttpResponse<String>> sendAsync(String method, String path, JsonNode body) {
            return http.sendAsync(request(method, path, body, token), HttpResponse.BodyHandlers.ofString());
        }

        private JsonNode call(String method, String path, JsonNode body, String bearer) {
            HttpResponse<String> response;
            try {
                response = http.send(request(method, path, body, bearer), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new ApiFailure(method + " " + base + path + ": " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ApiFailure("interrupted");
            }
            if (response.statusCode() / 100 != 2) {
                throw refused(method, path, response);
            }
            try {
                return response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
            } catch (IOException e) {
                throw new ApiFailure(method + " " + path + ": the answer is not JSON");
            }
        }

        static ApiFailure refused(String method, String path, HttpResponse<String> response) {
            return new ApiFailure(method + " " + path.replaceFirst("\\?.*", "") + " answered "
                    + response.statusCode() + ": " + response.body());
        }

        private HttpRequest request(String method, String path, JsonNode body, String bearer) {
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
            return request.build();
        }
    }

    /**
     * Writes of the import, at most {@code limit} under way at once. The first that fails stops the
     * rest from being sent; {@link #close} waits for those under way and throws that failure. A
     * create answered 409 (the name was taken since the pages were read) is handed back instead.
     */
    private static final class Writes implements AutoCloseable {

        private final Api api;
        private final int limit;
        private final Semaphore permits;
        private final AtomicReference<ApiFailure> failure = new AtomicReference<>();

        Writes(Api api, int limit) {
            this.api = api;
            this.limit = limit;
            this.permits = new Semaphore(limit);
        }

        void submit(Change change, Runnable conflict) {
            permits.acquireUninterruptibly();
            if (failure.get() != null) {
                permits.release();
                return;
            }
            api.sendAsync(change.method, change.path, change.body).whenComplete((response, error) -> {
                try {
                    if (error != null) {
                        failure.compareAndSet(null, new ApiFailure(change.method + " " + change.path + ": "
                                + (error.getCause() != null ? error.getCause() : error)));
                    } else if (response.statusCode() == 409 && change.method.equals("POST")) {
                        conflict.run();
                    } else if (response.statusCode() / 100 != 2) {
                        failure.compareAndSet(null, Api.refused(change.method, change.path, response));
                    }
                } finally {
                    permits.release();
                }
            });
        }

        @Override
        public void close() {
            permits.acquireUninterruptibly(limit);
            permits.release(limit);
            ApiFailure first = failure.get();
            if (first != null) {
                throw first;
            }
        }
    }
}
