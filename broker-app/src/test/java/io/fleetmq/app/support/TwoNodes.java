package io.fleetmq.app.support;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Two in-process nodes of one cluster, as the cluster tests of the admin API and of security need
 * them: a PostgreSQL schema and Kafka topic prefix of their own, node ids {@code <name>-1} and
 * {@code <name>-2}, the admin password set, and a bearer token from the first node.
 */
public final class TwoNodes implements AutoCloseable {

    public static final String ADMIN_PASSWORD = "two-nodes-admin-pw";
    private static final ObjectMapper JSON = new ObjectMapper();

    public final PrivateDatabase db;
    public final TestBroker first;
    /** The second node; {@link #restartSecond()} replaces it. */
    public TestBroker second;
    public final String token;
    private final Path dir;
    private final Map<String, String> secondEnv;

    private TwoNodes(PrivateDatabase db, TestBroker first, TestBroker second, String token, Path dir,
            Map<String, String> secondEnv) {
        this.db = db;
        this.first = first;
        this.second = second;
        this.token = token;
        this.dir = dir;
        this.secondEnv = secondEnv;
    }

    /**
     * Starts both nodes in {@code dir} (sub-directories 1 and 2) with {@code env} besides what this
     * sets, and logs in to the first.
     */
    public static TwoNodes start(Path dir, String name, Map<String, String> env) {
        PrivateDatabase db = PrivateDatabase.create();
        TestBroker first = null;
        try {
            Map<String, String> all = new HashMap<>(db.env());
            all.put("KAFKA_TOPIC_PREFIX", "t" + UUID.randomUUID().toString().substring(0, 8) + ".");
            all.put("ADMIN_PASSWORD", ADMIN_PASSWORD);
            all.putAll(env);
            all.put("BROKER_NODE_ID", name + "-1");
            first = TestBroker.start(Files.createDirectories(dir.resolve("1")), all);
            all.put("BROKER_NODE_ID", name + "-2");
            TestBroker second = TestBroker.start(Files.createDirectories(dir.resolve("2")), all);
            HttpResponse<String> login = AdminHttp.send(first.node().httpPort(), null, "POST", "/api/v1/auth/login",
                    "{\"username\":\"admin\",\"password\":\"" + ADMIN_PASSWORD + "\"}");
            if (login.statusCode() != 200) {
                throw new IllegalStateException("login failed: " + login.statusCode() + " " + login.body());
            }
            String token = JSON.readTree(login.body()).get("token").asText();
            return new TwoNodes(db, first, second, token, dir, Map.copyOf(all));
        } catch (IOException e) {
            if (first != null) {
                first.close();
            }
            db.close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            if (first != null) {
                first.close();
            }
            db.close();
            throw e;
        }
    }

    /** {@code method path} on {@code node}'s admin API with the token and a JSON {@code body} (null: none). */
    public HttpResponse<String> call(TestBroker node, String method, String path, String body) {
        return AdminHttp.send(node.node().httpPort(), token, method, path, body);
    }

    /**
     * Waits until both nodes know {@code count} subscriptions of {@code clientId}. A subscription
     * reaches the other node's routing a Kafka round trip after its SUBACK, and either node may route
     * a message (the one that owns its publish partition): a message published before that may miss
     * it (docs/cluster.md, "Limits today"). The admin API reads the same copy the routing does.
     */
    public void awaitSubscriptions(String clientId, int count) {
        String path = "/api/v1/subscriptions?clientId="
                + java.net.URLEncoder.encode(clientId, java.nio.charset.StandardCharsets.UTF_8);
        for (TestBroker node : new TestBroker[] {first, second}) {
            io.fleetmq.testkit.Await.until(java.time.Duration.ofSeconds(30), count + " subscription(s) of "
                    + clientId + " known on the " + (node == first ? "first" : "second") + " node", () -> {
                        HttpResponse<String> r = call(node, "GET", path, null);
                        try {
                            return r.statusCode() == 200 && JSON.readTree(r.body()).path("total").asInt() == count;
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
        }
    }

    /** Stops the second node and starts it again on the same data directory and settings. */
    public TestBroker restartSecond() {
        second.close();
        second = TestBroker.start(dir.resolve("2"), secondEnv);
        return second;
    }

    @Override
    public void close() {
        if (second != null) {
            second.close();
        }
        first.close();
        db.close();
    }
}
