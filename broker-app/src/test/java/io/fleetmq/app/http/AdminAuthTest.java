package io.fleetmq.app.http;

import static io.fleetmq.app.http.ApiTestNode.assertError;
import static io.fleetmq.app.http.ApiTestNode.body;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** Login, logout and the bearer check of the admin API on a node whose admin password is configured. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminAuthTest {

    private static final String PASSWORD = "configured-Secret-42";

    @TempDir
    static Path dataDir;
    private ApiTestNode node;

    @BeforeAll
    void start() {
        node = new ApiTestNode(dataDir, Map.of("ADMIN_PASSWORD", PASSWORD, "ADMIN_TOKEN_TTL", "2h"));
    }

    @AfterAll
    void stop() {
        node.close();
    }

    @Test
    void theConfiguredPasswordLogsInAndTheTokenOpensTheApi() {
        Instant before = Instant.now();
        HttpResponse<String> r = node.login("admin", PASSWORD);
        assertEquals(200, r.statusCode(), r.body());
        JsonNode body = body(r);
        assertFalse(body.path("token").asText().isEmpty(), r.body());
        Instant expiresAt = Instant.parse(body.path("expiresAt").asText());
        assertTrue(!expiresAt.isBefore(before.plus(Duration.ofHours(2)).minusSeconds(60))
                && !expiresAt.isAfter(Instant.now().plus(Duration.ofHours(2)).plusSeconds(60)), "2h TTL: " + expiresAt);
        assertEquals(200, node.get("/api/v1/credentials", body.path("token").asText()).statusCode());
        // No password was generated, so none was written.
        assertFalse(dataDir.resolve(InitialAdmin.PASSWORD_FILE).toFile().exists());
    }

    @Test
    void aWrongPasswordAndAnUnknownUserGetTheSameAnswer() {
        HttpResponse<String> wrong = node.login("admin", PASSWORD + "x");
        HttpResponse<String> unknown = node.login("nobody", PASSWORD);
        JsonNode w = assertError(wrong, 401, "unauthorized", null);
        JsonNode u = assertError(unknown, 401, "unauthorized", null);
        assertEquals(w, u, "neither answer tells which part was wrong");
        assertFalse(w.path("message").asText().isEmpty());
    }

    @Test
    void aLoginWithoutAFieldIsABadRequestNamingIt() {
        assertError(node.send("POST", "/api/v1/auth/login", "{\"username\":\"admin\"}", null), 400, "bad_request",
                "password:");
        assertError(node.send("POST", "/api/v1/auth/login", "{\"password\":\"x\"}", null), 400, "bad_request",
                "username:");
        assertError(node.send("POST", "/api/v1/auth/login", "{\"username\":\"admin\",", null), 400, "bad_request",
                "body:");
    }

    @Test
    void everyApiPathButLoginAndTheDocumentNeedsAToken() {
        for (String path : new String[] {"/api/v1/credentials", "/api/v1/blocked", "/api/v1/refused-connections",
                "/api/v1/credentials/00000000-0000-0000-0000-000000000000", "/api/v1/no-such-thing"}) {
            HttpResponse<String> r = node.get(path, null);
            assertError(r, 401, "unauthorized", null);
            assertTrue(r.headers().firstValue("www-authenticate").orElse("").startsWith("Bearer"), path);
        }
        assertError(node.send("POST", "/api/v1/auth/logout", null, null), 401, "unauthorized", null);
        assertEquals(200, node.get("/api/v1/openapi.json", null).statusCode());
    }

    @Test
    void anUnknownTokenIsRefused() {
        HttpResponse<String> r = node.get("/api/v1/credentials", "not-a-token-of-this-cluster");
        assertError(r, 401, "unauthorized", null);
        assertTrue(r.headers().firstValue("www-authenticate").orElse("").contains("invalid_token"));
        // Another scheme is no bearer token.
        HttpResponse<String> basic = node.send("GET", "/api/v1/credentials", null, null);
        assertError(basic, 401, "unauthorized", null);
    }

    @Test
    void logoutRevokesTheTokenAndOnlyThatToken() {
        String first = node.token("admin", PASSWORD);
        String second = node.token("admin", PASSWORD);
        assertEquals(204, node.send("POST", "/api/v1/auth/logout", null, first).statusCode());
        assertError(node.get("/api/v1/credentials", first), 401, "unauthorized", null);
        assertEquals(200, node.get("/api/v1/credentials", second).statusCode());
    }

    @Test
    void healthAndMetricsStayOpenAndUnknownPathsAndMethodsAreJson() {
        assertEquals(200, node.get("/health/live", null).statusCode());
        assertEquals(200, node.get("/health/ready", null).statusCode());
        HttpResponse<String> metrics = node.get("/metrics", null);
        assertEquals(200, metrics.statusCode());
        assertTrue(metrics.body().contains("fleetmq_startup_seconds"), "Prometheus text");
        assertError(node.get("/nope", null), 404, "not_found", null);
        String token = node.token("admin", PASSWORD);
        assertError(node.get("/api/v1/no-such-thing", token), 404, "not_found", null);
        HttpResponse<String> post = node.send("POST", "/health/ready", null, null);
        assertError(post, 405, "method_not_allowed", null);
        assertTrue(post.headers().firstValue("allow").orElse("").contains("GET"), post.headers().map().toString());
        assertError(node.send("PATCH", "/api/v1/credentials", "{}", token), 405, "method_not_allowed", null);
    }

    @Test
    void theOpenApiDocumentDescribesEveryOperation() {
        HttpResponse<String> r = node.get("/api/v1/openapi.json", null);
        assertEquals(200, r.statusCode(), r.body());
        JsonNode doc = body(r);
        assertTrue(doc.path("openapi").asText().startsWith("3."), "OpenAPI 3: " + doc.path("openapi"));
        JsonNode paths = doc.path("paths");
        Map<String, java.util.List<String>> expected = Map.of(
                "/api/v1/auth/login", java.util.List.of("post"),
                "/api/v1/auth/logout", java.util.List.of("post"),
                "/api/v1/credentials", java.util.List.of("get", "post"),
                "/api/v1/credentials/{id}", java.util.List.of("get", "put", "delete"),
                "/api/v1/blocked", java.util.List.of("get", "post"),
                "/api/v1/blocked/{id}", java.util.List.of("get", "delete"),
                "/api/v1/refused-connections", java.util.List.of("get"));
        expected.forEach((path, methods) -> methods.forEach(m ->
                assertTrue(paths.path(path).has(m), m + " " + path + " in " + paths.fieldNames())));

        assertEquals("http", doc.at("/components/securitySchemes/bearer/type").asText());
        assertEquals("bearer", doc.at("/components/securitySchemes/bearer/scheme").asText());
        JsonNode create = paths.path("/api/v1/credentials").path("post");
        assertEquals("#/components/schemas/CredentialRequest",
                create.at("/requestBody/content/application~1json/schema/$ref").asText());
        for (String status : new String[] {"201", "400", "401", "409"}) {
            assertTrue(create.path("responses").has(status), "POST credentials answers " + status);
        }
        assertEquals("bearer", create.path("security").get(0).fieldNames().next());
        assertTrue(paths.path("/api/v1/credentials/{id}").path("get").path("responses").has("404"));
        assertTrue(paths.path("/api/v1/auth/login").path("post").path("security").isMissingNode(), "login is open");

        JsonNode schemas = doc.at("/components/schemas");
        for (String field : new String[] {"type", "username", "clientId", "password", "clientType", "publish", "subscribe"}) {
            assertTrue(schemas.path("CredentialRequest").path("properties").has(field), "CredentialRequest." + field);
        }
        assertTrue(schemas.path("CredentialView").path("properties").has("hasPassword"));
        assertFalse(schemas.path("CredentialView").path("properties").has("password"));
        assertEquals("array", schemas.at("/CredentialPage/properties/items/type").asText());
        assertTrue(schemas.path("ErrorBody").path("properties").has("message"));
        assertTrue(schemas.path("BlockedRequest").path("properties").has("expiresAt"));
        assertTrue(schemas.path("RefusedPage").path("properties").has("total"));
    }
}
