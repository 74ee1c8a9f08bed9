package io.fleetmq.app.http;

import static io.fleetmq.app.http.ApiTestNode.body;
import static io.fleetmq.app.http.ApiTestNode.json;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.app.metrics.Metrics;
import io.fleetmq.core.health.Readiness;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.core.security.SecurityChange.Kind;
import io.fleetmq.persistence.auth.PasswordHashes;
import io.fleetmq.persistence.sql.Database;
import io.fleetmq.persistence.sql.DatabaseSettings;
import io.fleetmq.testkit.TestServices;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every successful write of the admin API is announced once, with {@code accessChanged} telling
 * nodes whether clients connected with a credential must authenticate again; failed writes are
 * not announced. The admin port alone on real PostgreSQL, with an announcer that records.
 */
class AdminApiAnnouncementsTest {

    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    @TempDir
    Path dataDir;
    private final TestServices services = TestServices.shared();
    private final String schema = "ann_" + UUID.randomUUID().toString().replace("-", "");
    private final List<SecurityChange> announced = Collections.synchronizedList(new ArrayList<>());
    private Readiness readiness;
    private Metrics metrics;
    private Database database;
    private AdminHttpServer server;
    private String token;

    @BeforeEach
    void start() throws Exception {
        sql("CREATE SCHEMA " + schema);
        String url = services.databaseUrl() + (services.databaseUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema;
        database = Database.open(new DatabaseSettings(url, services.databaseUser(), services.databasePassword(), 2,
                Duration.ofSeconds(10)));
        readiness = new Readiness();
        metrics = new Metrics("announce-test");
        PasswordHashes hashes = new PasswordHashes(4, 14, 1_000);
        AdminApi api = new AdminApi(announced::add, Duration.ofHours(1), hashes);
        server = AdminHttpServer.start("127.0.0.1", 0, readiness, metrics, api);
        // Before PostgreSQL is connected the API says so rather than failing.
        HttpResponse<String> early = send("POST", "/api/v1/auth/login",
                json(Map.of("username", "admin", "password", "pw-announce")));
        assertEquals(503, early.statusCode(), early.body());
        assertEquals("unavailable", body(early).path("error").asText());
        SecurityStores stores = SecurityStores.on(database.dataSource());
        api.connect(stores, new InitialAdmin(stores.adminUsers(), hashes, "pw-announce", dataDir));
        HttpResponse<String> login = send("POST", "/api/v1/auth/login",
                json(Map.of("username", "admin", "password", "pw-announce")));
        assertEquals(200, login.statusCode(), login.body());
        token = body(login).path("token").asText();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        readiness.close();
        metrics.close();
        database.close();
        sql("DROP SCHEMA " + schema + " CASCADE");
    }

    @Test
    void writesAreAnnouncedWithWhetherAccessChanged() {
        Map<String, Object> c = new HashMap<>(Map.of("type", "basic", "username", "u1", "password", "p1",
                "publish", List.of("a/b")));
        String id = body(send("POST", "/api/v1/credentials", json(c))).path("id").asText();
        assertEquals(new SecurityChange(Kind.CREDENTIAL, id, false, false), last());

        c.put("publish", List.of("a/c"));
        c.remove("password");
        assertEquals(200, send("PUT", "/api/v1/credentials/" + id, json(c)).statusCode());
        assertEquals(new SecurityChange(Kind.CREDENTIAL, id, false, false), last(), "rules only");

        c.put("password", "p2");
        assertEquals(200, send("PUT", "/api/v1/credentials/" + id, json(c)).statusCode());
        assertEquals(new SecurityChange(Kind.CREDENTIAL, id, false, true), last(), "new password");

        c.remove("password");
        c.put("clientType", "APPLICATION");
        assertEquals(200, send("PUT", "/api/v1/credentials/" + id, json(c)).statusCode());
        assertEquals(new SecurityChange(Kind.CREDENTIAL, id, false, true), last(), "new client type");

        c.put("username", "u2");
        assertEquals(200, send("PUT", "/api/v1/credentials/" + id, json(c)).statusCode());
        assertEquals(new SecurityChange(Kind.CREDENTIAL, id, false, true), last(), "new user name");

        int before = announced.size();
        c.put("clientType", "PHONE");
        assertEquals(400, send("PUT", "/api/v1/credentials/" + id, json(c)).statusCode());
        assertEquals(before, announced.size(), "a refused write is not announced");

        assertEquals(204, send("DELETE", "/api/v1/credentials/" + id, null).statusCode());
        assertEquals(new SecurityChange(Kind.CREDENTIAL, id, true, true), last());
        assertEquals(404, send("DELETE", "/api/v1/credentials/" + id, null).statusCode());
        assertEquals(before + 1, announced.size(), "deleting nothing is not announced");

        String blocked = body(send("POST", "/api/v1/blocked", json(Map.of("type", "username", "value", "eve"))))
                .path("id").asText();
        assertEquals(new SecurityChange(Kind.BLOCKED, blocked, false, false), last());
        assertEquals(204, send("DELETE", "/api/v1/blocked/" + blocked, null).statusCode());
        assertEquals(new SecurityChange(Kind.BLOCKED, blocked, true, true), last());

        assertEquals(204, send("POST", "/api/v1/auth/logout", null).statusCode());
        SecurityChange logout = last();
        assertEquals(Kind.ADMIN_TOKEN, logout.kind());
        assertEquals(AuthRoutes.tokenId(token), logout.id(), "named by its hash, never the token itself");
        assertEquals(true, logout.deleted());
    }

    private SecurityChange last() {
        return announced.get(announced.size() - 1);
    }

    private HttpResponse<String> send(String method, String path, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private void sql(String statement) throws Exception {
        try (Connection c = DriverManager.getConnection(services.databaseUrl(), services.databaseUser(),
                services.databasePassword()); Statement st = c.createStatement()) {
            st.execute(statement);
        }
    }
}
