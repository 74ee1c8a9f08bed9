package io.fleetmq.app.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.persistence.sql.Database;
import io.fleetmq.persistence.sql.DatabaseSettings;
import io.fleetmq.testkit.TestServices;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * A real node (see {@link TestBroker}) whose PostgreSQL tables live in a schema of their own, so
 * that "no admin user yet" holds at its start whatever other tests did; with an HTTP client for
 * its admin API.
 */
final class ApiTestNode implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final TestServices services = TestServices.shared();
    private final String schema = "api_" + UUID.randomUUID().toString().replace("-", "");
    private final String databaseUrl;
    private final TestBroker broker;
    private Database database;

    ApiTestNode(Path dataDir, Map<String, String> extraEnv) {
        sql("CREATE SCHEMA " + schema);
        String url = services.databaseUrl();
        databaseUrl = url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        Map<String, String> env = new HashMap<>(extraEnv);
        env.put("DATABASE_URL", databaseUrl);
        broker = TestBroker.start(dataDir, env);
    }

    int port() {
        return broker.node().httpPort();
    }

    /** The node itself, for its listeners' ports and MQTT clients. */
    TestBroker broker() {
        return broker;
    }

    /** The node's MQTT TCP port. */
    int mqttPort() {
        return broker.mqttPort();
    }

    /** A pool on this node's schema, for what a test writes or reads besides the API. */
    synchronized Database database() {
        if (database == null) {
            database = Database.open(new DatabaseSettings(databaseUrl, services.databaseUser(),
                    services.databasePassword(), 2, Duration.ofSeconds(10)));
        }
        return database;
    }

    HttpResponse<String> send(String method, String path, String body, String token) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port() + path))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    HttpResponse<String> get(String path, String token) {
        return send("GET", path, null, token);
    }

    HttpResponse<String> login(String username, String password) {
        return send("POST", "/api/v1/auth/login", json(Map.of("username", username, "password", password)), null);
    }

    /** A token for {@code username}, asserting the login succeeds. */
    String token(String username, String password) {
        HttpResponse<String> r = login(username, password);
        assertEquals(200, r.statusCode(), r.body());
        String token = body(r).path("token").asText();
        assertFalse(token.isEmpty(), r.body());
        return token;
    }

    static JsonNode body(HttpResponse<String> r) {
        try {
            JsonNode node = JSON.readTree(r.body());
            assertNotNull(node, "a JSON body");
            return node;
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + r.body(), e);
        }
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Asserts an error answer: the status, the error code, and that the message names {@code field}. */
    static JsonNode assertError(HttpResponse<String> r, int status, String error, String messageStart) {
        assertEquals(status, r.statusCode(), r.body());
        assertEquals("application/json", r.headers().firstValue("content-type").orElse("").split(";")[0], r.body());
        JsonNode body = body(r);
        assertEquals(error, body.path("error").asText(), r.body());
        if (messageStart != null) {
            String message = body.path("message").asText();
            if (!message.startsWith(messageStart)) {
                throw new AssertionError("message should start with '" + messageStart + "': " + r.body());
            }
        }
        return body;
    }

    @Override
    public void close() {
        try {
            broker.close();
        } finally {
            if (database != null) {
                database.close();
            }
            sql("DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private void sql(String statement) {
        try (Connection c = DriverManager.getConnection(services.databaseUrl(), services.databaseUser(),
                services.databasePassword()); Statement st = c.createStatement()) {
            st.execute(statement);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot " + statement + ": " + e.getMessage(), e);
        }
    }
}
