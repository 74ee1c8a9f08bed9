package io.fleetmq.app.http;

import static io.fleetmq.app.http.ApiTestNode.assertError;
import static io.fleetmq.app.http.ApiTestNode.body;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.persistence.security.RefusedConnections;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code /api/v1/refused-connections} lists what nodes wrote to the log, filtered and paged. */
class RefusedConnectionsApiTest {

    private static final String PATH = "/api/v1/refused-connections";

    @TempDir
    Path dataDir;

    @Test
    void listsTheLogLatestFirstWithFilters() {
        try (ApiTestNode node = new ApiTestNode(dataDir, Map.of("ADMIN_PASSWORD", "admin-Password-3"))) {
            Instant t = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            new RefusedConnections(node.database().dataSource()).record(List.of(
                    new RefusedConnection("sensor-1", "alice", "10.0.0.1", true, false,
                            RefusedConnection.BAD_CREDENTIALS, t.minusSeconds(30), t.minusSeconds(30), 1),
                    new RefusedConnection("sensor-2", null, "10.0.0.2", false, true,
                            RefusedConnection.ANONYMOUS_REFUSED, t.minusSeconds(20), t.minusSeconds(20), 3),
                    new RefusedConnection("app-1", "bob", "192.168.5.9", true, false,
                            RefusedConnection.BLOCKED, t.minusSeconds(10), t.minusSeconds(10), 2)));
            String token = node.token("admin", "admin-Password-3");

            JsonNode all = body(node.get(PATH, token));
            assertEquals(3, all.path("total").asLong(), all.toString());
            assertEquals(List.of("app-1", "sensor-2", "sensor-1"), clientIds(all));
            JsonNode first = all.path("items").get(0);
            assertEquals("bob", first.path("username").asText());
            assertEquals("192.168.5.9", first.path("address").asText());
            assertEquals("blocked", first.path("reason").asText());
            assertEquals(2, first.path("count").asLong());
            assertEquals(t.minusSeconds(10), Instant.parse(first.path("lastAt").asText()));
            assertFalse(first.has("password"));

            assertEquals(List.of("sensor-2", "sensor-1"), clientIds(body(node.get(PATH + "?clientId=sensor", token))));
            assertEquals(List.of("sensor-1"), clientIds(body(node.get(PATH + "?username=ali", token))));
            assertEquals(List.of("app-1"), clientIds(body(node.get(PATH + "?address=192.168", token))));
            assertEquals(List.of("sensor-2"),
                    clientIds(body(node.get(PATH + "?reason=anonymous_refused", token))));
            JsonNode page = body(node.get(PATH + "?page=1&pageSize=2", token));
            assertEquals(List.of("sensor-1"), clientIds(page));
            assertEquals(3, page.path("total").asLong());
            assertError(node.get(PATH + "?reason=bored", token), 400, "bad_request", "reason:");
            assertError(node.get(PATH, null), 401, "unauthorized", null);
        }
    }

    private static List<String> clientIds(JsonNode page) {
        List<String> ids = new ArrayList<>();
        page.path("items").forEach(i -> ids.add(i.path("clientId").asText()));
        return ids;
    }
}
