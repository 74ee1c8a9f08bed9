package io.fleetmq.app.http;

import static io.fleetmq.app.http.ApiTestNode.assertError;
import static io.fleetmq.app.http.ApiTestNode.body;
import static io.fleetmq.app.http.ApiTestNode.json;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** {@code /api/v1/blocked} on a real node, and {@code /api/v1/refused-connections}. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BlockedApiTest {

    private static final String PATH = "/api/v1/blocked";

    @TempDir
    static Path dataDir;
    private ApiTestNode node;
    private String token;

    @BeforeAll
    void start() {
        node = new ApiTestNode(dataDir, Map.of("ADMIN_PASSWORD", "admin-Password-2"));
        token = node.token("admin", "admin-Password-2");
    }

    @AfterAll
    void stop() {
        node.close();
    }

    private HttpResponse<String> send(String method, String path, Object body) {
        return node.send(method, path, body == null ? null : body instanceof String s ? s : json(body), token);
    }

    private static Map<String, Object> entry(String type, String value, String target, String expiresAt) {
        Map<String, Object> e = new HashMap<>();
        e.put("type", type);
        e.put("value", value);
        e.put("target", target);
        e.put("expiresAt", expiresAt);
        return e;
    }

    private String create(Map<String, Object> entry) {
        HttpResponse<String> r = send("POST", PATH, entry);
        assertEquals(201, r.statusCode(), r.body());
        String id = body(r).path("id").asText();
        assertEquals(PATH + "/" + id, r.headers().firstValue("location").orElse(""));
        return id;
    }

    @Test
    void createReadListDelete() {
        String client = "blocked-" + UUID.randomUUID();
        Instant until = Instant.now().plus(1, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS);
        String id = create(entry("client_id", client, null, until.toString()));
        String regex = create(entry("regex", "^bad-.*$", "username", null));
        String range = create(entry("ip", "10.1.0.0/16", null, null));

        JsonNode read = body(send("GET", PATH + "/" + id, null));
        assertEquals("client_id", read.path("type").asText());
        assertEquals(client, read.path("value").asText());
        assertEquals(until, Instant.parse(read.path("expiresAt").asText()));
        assertFalse(read.path("expired").asBoolean());
        assertEquals("username", body(send("GET", PATH + "/" + regex, null)).path("target").asText());

        JsonNode all = body(send("GET", PATH + "?pageSize=2", null));
        assertEquals(3, all.path("total").asLong(), all.toString());
        assertEquals(2, all.path("items").size());
        JsonNode ips = body(send("GET", PATH + "?type=ip", null));
        assertEquals(1, ips.path("total").asLong());
        assertEquals(range, ips.path("items").get(0).path("id").asText());
        assertError(send("GET", PATH + "?type=mac", null), 400, "bad_request", "type:");

        assertError(send("POST", PATH, entry("client_id", client, null, until.toString())), 409, "conflict", null);

        assertEquals(204, send("DELETE", PATH + "/" + id, null).statusCode());
        assertError(send("GET", PATH + "/" + id, null), 404, "not_found", null);
        assertError(send("DELETE", PATH + "/" + id, null), 404, "not_found", null);
        assertError(send("GET", PATH + "/" + UUID.randomUUID(), null), 404, "not_found", null);
    }

    @Test
    void eachInvalidFieldIsNamed() {
        assertError(send("POST", PATH, entry("mac", "x", null, null)), 400, "bad_request", "type:");
        assertError(send("POST", PATH, entry(null, "x", null, null)), 400, "bad_request", "type:");
        assertError(send("POST", PATH, entry("client_id", null, null, null)), 400, "bad_request", "value:");
        assertError(send("POST", PATH, entry("ip", "999.1.1.1", null, null)), 400, "bad_request", "value:");
        assertError(send("POST", PATH, entry("regex", "(", "username", null)), 400, "bad_request", "value:");
        assertError(send("POST", PATH, entry("regex", "a.*", null, null)), 400, "bad_request", "target:");
        assertError(send("POST", PATH, entry("username", "u", "ip", null)), 400, "bad_request", "target:");
        assertError(send("POST", PATH, entry("username", "u", null, "tomorrow")), 400, "bad_request",
                "expiresAt:");
        assertError(send("POST", PATH, entry("username", "u", null, Instant.now().minusSeconds(60).toString())),
                400, "bad_request", "expiresAt: must be in the future");
        Map<String, Object> extra = entry("username", "u", null, null);
        extra.put("reason", "spam");
        assertError(send("POST", PATH, extra), 400, "bad_request", "reason:");
        assertError(send("POST", PATH, "{"), 400, "bad_request", "body:");
        assertTrue(body(send("GET", PATH + "?type=username", null)).path("items").isEmpty(), "nothing stored");
    }
}
