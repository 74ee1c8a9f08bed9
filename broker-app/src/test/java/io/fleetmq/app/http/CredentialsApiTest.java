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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** {@code /api/v1/credentials} on a real node: CRUD, paging, filters, validation, and no password ever returned. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CredentialsApiTest {

    private static final String PATH = "/api/v1/credentials";
    private static final String SECRET = "device-Secret-9";

    @TempDir
    static Path dataDir;
    private ApiTestNode node;
    private String token;
    /** Every body the API answered in this class, checked for passwords at the end. */
    private final List<String> bodies = new ArrayList<>();

    @BeforeAll
    void start() {
        node = new ApiTestNode(dataDir, Map.of("ADMIN_PASSWORD", "admin-Password-1"));
        token = node.token("admin", "admin-Password-1");
    }

    @AfterAll
    void stop() {
        try {
            for (String body : bodies) {
                assertFalse(body.contains(SECRET) || body.contains("$2b$") || body.contains("passwordHash"),
                        "no password or hash in " + body);
            }
        } finally {
            node.close();
        }
    }

    private HttpResponse<String> send(String method, String path, Object body) {
        HttpResponse<String> r = node.send(method, path, body == null ? null : body instanceof String s ? s : json(body),
                token);
        bodies.add(r.body());
        return r;
    }

    private static Map<String, Object> credential(String username, String clientId) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("type", "basic");
        c.put("username", username);
        c.put("clientId", clientId);
        c.put("password", SECRET);
        c.put("clientType", "DEVICE");
        c.put("publish", List.of("devices/${clientid}/up"));
        c.put("subscribe", List.of("devices/${clientid}/down/#"));
        return c;
    }

    private String create(Map<String, Object> credential) {
        HttpResponse<String> r = send("POST", PATH, credential);
        assertEquals(201, r.statusCode(), r.body());
        String id = body(r).path("id").asText();
        assertEquals(PATH + "/" + id, r.headers().firstValue("location").orElse(""));
        return id;
    }

    @Test
    void createReadReplaceDelete() {
        String user = "crud-" + UUID.randomUUID();
        String id = create(credential(user, null));

        HttpResponse<String> read = send("GET", PATH + "/" + id, null);
        assertEquals(200, read.statusCode(), read.body());
        JsonNode c = body(read);
        assertEquals(id, c.path("id").asText());
        assertEquals("basic", c.path("type").asText());
        assertEquals(user, c.path("username").asText());
        assertTrue(c.path("clientId").isNull(), read.body());
        assertTrue(c.path("hasPassword").asBoolean(), read.body());
        assertEquals("DEVICE", c.path("clientType").asText());
        assertEquals("devices/${clientid}/up", c.path("publish").get(0).asText());
        assertFalse(c.has("password"), read.body());

        // A full replace without password keeps the password; its other fields are replaced.
        Map<String, Object> replacement = credential(user, "client-" + user);
        replacement.remove("password");
        replacement.put("clientType", null);
        replacement.put("publish", List.of());
        HttpResponse<String> put = send("PUT", PATH + "/" + id, replacement);
        assertEquals(200, put.statusCode(), put.body());
        JsonNode updated = body(put);
        assertTrue(updated.path("hasPassword").asBoolean(), "password kept: " + put.body());
        assertEquals("client-" + user, updated.path("clientId").asText());
        assertTrue(updated.path("clientType").isNull());
        assertEquals(0, updated.path("publish").size());
        assertEquals(body(send("GET", PATH + "/" + id, null)), updated, "GET shows what PUT answered");

        assertEquals(204, send("DELETE", PATH + "/" + id, null).statusCode());
        assertError(send("GET", PATH + "/" + id, null), 404, "not_found", null);
        assertError(send("DELETE", PATH + "/" + id, null), 404, "not_found", null);
        assertError(send("PUT", PATH + "/" + id, credential(user, null)), 404, "not_found", null);
    }

    @Test
    void aCredentialWithoutPasswordSaysSo() {
        Map<String, Object> c = credential(null, "nopass-" + UUID.randomUUID());
        c.remove("password");
        String id = create(c);
        assertFalse(body(send("GET", PATH + "/" + id, null)).path("hasPassword").asBoolean());
    }

    @Test
    void anX509CredentialHasACertificateNameAndNoPassword() {
        String name = "fleet-" + UUID.randomUUID();
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("type", "x509");
        c.put("certCommonName", name + "-[0-9]+");
        c.put("certCommonNameRegex", true);
        c.put("clientType", "DEVICE");
        c.put("publish", List.of("devices/${cn}/up"));
        String id = create(c);
        JsonNode read = body(send("GET", PATH + "/" + id, null));
        assertEquals("x509", read.path("type").asText());
        assertEquals(name + "-[0-9]+", read.path("certCommonName").asText());
        assertTrue(read.path("certCommonNameRegex").asBoolean());
        assertFalse(read.path("hasPassword").asBoolean());
        assertTrue(read.path("username").isNull());
        assertEquals("devices/${cn}/up", read.path("publish").get(0).asText());

        c.put("certCommonName", name);
        c.put("certCommonNameRegex", false);
        JsonNode replaced = body(send("PUT", PATH + "/" + id, c));
        assertEquals(name, replaced.path("certCommonName").asText());
        assertFalse(replaced.path("certCommonNameRegex").asBoolean());
        assertEquals(1, body(send("GET", PATH + "?text=" + name, null)).path("total").asLong());
        assertError(send("POST", PATH, c), 409, "conflict", null);
    }

    @Test
    void unknownAndMalformedIdsAre404() {
        assertError(send("GET", PATH + "/" + UUID.randomUUID(), null), 404, "not_found", null);
        assertError(send("GET", PATH + "/not-an-id", null), 404, "not_found", null);
    }

    @Test
    void theSameUsernameAndClientIdTwiceIsAConflict() {
        String user = "dup-" + UUID.randomUUID();
        create(credential(user, "c1"));
        assertError(send("POST", PATH, credential(user, "c1")), 409, "conflict", null);
        // Renaming another credential onto it conflicts as well.
        String other = create(credential(user, "c2"));
        assertError(send("PUT", PATH + "/" + other, credential(user, "c1")), 409, "conflict", null);
    }

    @Test
    void listingIsPagedAndFiltered() {
        String prefix = "page-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        for (int i = 0; i < 5; i++) {
            Map<String, Object> c = credential(prefix + i, null);
            c.put("clientType", i < 2 ? "APPLICATION" : "DEVICE");
            create(c);
        }
        JsonNode first = body(send("GET", PATH + "?text=" + prefix + "&pageSize=2", null));
        assertEquals(5, first.path("total").asLong(), first.toString());
        assertEquals(0, first.path("page").asInt());
        assertEquals(2, first.path("pageSize").asInt());
        assertEquals(List.of(prefix + 0, prefix + 1), usernames(first));
        JsonNode last = body(send("GET", PATH + "?text=" + prefix + "&pageSize=2&page=2", null));
        assertEquals(List.of(prefix + 4), usernames(last));

        JsonNode apps = body(send("GET", PATH + "?text=" + prefix + "&clientType=APPLICATION", null));
        assertEquals(List.of(prefix + 0, prefix + 1), usernames(apps));
        JsonNode one = body(send("GET", PATH + "?username=" + prefix + 3, null));
        assertEquals(List.of(prefix + 3), usernames(one));
        assertFalse(one.path("items").get(0).has("password"));
        assertTrue(one.path("items").get(0).path("hasPassword").asBoolean());

        JsonNode defaults = body(send("GET", PATH, null));
        assertEquals(20, defaults.path("pageSize").asInt());
        assertError(send("GET", PATH + "?pageSize=1001", null), 400, "bad_request", "pageSize:");
        assertError(send("GET", PATH + "?pageSize=0", null), 400, "bad_request", "pageSize:");
        assertError(send("GET", PATH + "?page=-1", null), 400, "bad_request", "page:");
        assertError(send("GET", PATH + "?page=x", null), 400, "bad_request", "page:");
        assertError(send("GET", PATH + "?clientType=PHONE", null), 400, "bad_request", "clientType:");
    }

    private static List<String> usernames(JsonNode page) {
        List<String> names = new ArrayList<>();
        page.path("items").forEach(i -> names.add(i.path("username").asText()));
        return names;
    }

    @Test
    void eachInvalidFieldIsNamed() {
        String user = "bad-" + UUID.randomUUID();
        Map<String, Map<String, Object>> cases = new LinkedHashMap<>();
        cases.put("type:", with(credential(user, null), "type", "jwt"));
        cases.put("certCommonName:", with(credential(user, null), "certCommonName", "dev"));
        cases.put("certCommonNameRegex:", with(credential(user, null), "certCommonNameRegex", true));
        Map<String, Object> x509 = new LinkedHashMap<>();
        x509.put("type", "x509");
        x509.put("certCommonName", user);
        cases.put("certCommonName:  ", with(x509, "certCommonName", null));
        cases.put("certCommonName:   ", with(with(x509, "certCommonName", "dev-(["), "certCommonNameRegex", true));
        cases.put("password:  ", with(x509, "password", SECRET));
        cases.put("username:  ", with(x509, "username", user));
        cases.put("clientId:  ", with(x509, "clientId", user));
        cases.put("type: ", with(credential(user, null), "type", null));
        cases.put("username:", with(credential(null, null), "username", null));
        cases.put("username: ", with(credential(user, null), "username", ""));
        cases.put("clientId:", with(credential(user, null), "clientId", ""));
        cases.put("clientType:", with(credential(user, null), "clientType", "PHONE"));
        cases.put("password:", with(credential(user, null), "password", ""));
        cases.put("password: ", with(credential(user, null), "password", "x".repeat(73)));
        cases.put("publish[1]:", with(credential(user, null), "publish", List.of("ok/topic", "bad/#/rule")));
        cases.put("subscribe[0]:", with(credential(user, null), "subscribe", List.of("a/${nope}")));
        cases.put("publish:", with(credential(user, null), "publish", "not-a-list"));
        cases.put("color:", with(credential(user, null), "color", "blue"));
        for (Map.Entry<String, Map<String, Object>> c : cases.entrySet()) {
            String field = c.getKey().strip();
            assertError(send("POST", PATH, c.getValue()), 400, "bad_request", field);
        }
        assertError(send("POST", PATH, "{\"type\":\"basic\","), 400, "bad_request", "body:");
        assertError(send("POST", PATH, "[]"), 400, "bad_request", "body:");
        assertError(send("POST", PATH, ""), 400, "bad_request", "body:");

        String id = create(credential(user, null));
        assertError(send("PUT", PATH + "/" + id, with(credential(user, null), "password", "")), 400, "bad_request",
                "password:");
        assertError(send("PUT", PATH + "/" + id, with(credential(user, null), "clientType", "x")), 400,
                "bad_request", "clientType:");
        assertEquals(0, body(send("GET", PATH + "?text=" + user, null)).path("total").asLong() - 1,
                "only the valid one was stored");
    }

    private static Map<String, Object> with(Map<String, Object> base, String field, Object value) {
        Map<String, Object> copy = new HashMap<>(base);
        copy.put(field, value);
        return copy;
    }

    @Test
    void anExistingHashIsKeptValidatedAndNeverReturned() {
        // Mosquitto's $7$ (what mosquitto_passwd writes by default): 101 iterations, 12-byte salt, 64-byte hash.
        String hash = "$7$101$" + java.util.Base64.getEncoder().encodeToString(new byte[12]) + "$"
                + java.util.Base64.getEncoder().encodeToString(new byte[64]);
        Map<String, Object> c = credential("hash-" + UUID.randomUUID(), null);
        c.remove("password");
        c.put("passwordHash", hash);
        HttpResponse<String> created = node.send("POST", PATH, json(c), token);
        assertEquals(201, created.statusCode(), created.body());
        HttpResponse<String> read = node.send("GET", PATH + "/" + body(created).path("id").asText(), null, token);
        assertFalse(read.body().contains(hash) || read.body().contains("$7$"), read.body());
        assertTrue(body(read).path("hasPassword").asBoolean());
        assertEquals(64, body(read).path("passwordFingerprint").asText().length(), read.body());

        Map<String, Object> damaged = new HashMap<>(c);
        damaged.put("username", "hash-" + UUID.randomUUID());
        damaged.put("passwordHash", "$7$101$not-base64$x");
        HttpResponse<String> refused = node.send("POST", PATH, json(damaged), token);
        assertEquals(400, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("passwordHash") && !refused.body().contains("not-base64"), refused.body());
        damaged.put("passwordHash", "plain-text");
        assertEquals(400, node.send("POST", PATH, json(damaged), token).statusCode());
        damaged.put("passwordHash", hash);
        damaged.put("password", SECRET);
        HttpResponse<String> both = node.send("POST", PATH, json(damaged), token);
        assertEquals(400, both.statusCode(), both.body());
        assertTrue(both.body().contains("not both"), both.body());
    }

    @Test
    void denyRulesAreValidatedLikeAllowRules() {
        Map<String, Object> c = credential("deny-" + UUID.randomUUID(), null);
        c.put("publish", List.of("#", "!secret/#"));
        create(c);
        c.put("username", "deny-" + UUID.randomUUID());
        c.put("publish", List.of("#", "!"));
        HttpResponse<String> r = send("POST", PATH, c);
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("publish[1]") && r.body().contains("deny rule"), r.body());
    }
}
