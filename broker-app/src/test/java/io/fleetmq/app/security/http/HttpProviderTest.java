package io.fleetmq.app.security.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.app.security.provider.AuthResult;
import io.fleetmq.app.security.provider.Identity;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.testkit.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The http provider against a real HTTP server on a free loopback port. */
class HttpProviderTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private FakeAuthService service;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private HttpProvider provider;

    @BeforeEach
    void start() throws Exception {
        service = new FakeAuthService();
    }

    @AfterEach
    void stop() {
        if (provider != null) {
            provider.close();
        }
        service.close();
    }

    private HttpProvider provider(URI url, Duration timeout, int maxConcurrent, Duration cacheTtl, boolean failOpen) {
        provider = new HttpProvider(new HttpAuthSettings(url,
                List.of(new HttpAuthSettings.Header("Authorization", "Bearer t0ken")), timeout, maxConcurrent,
                cacheTtl, failOpen), meters);
        return provider;
    }

    private HttpProvider provider(boolean failOpen) {
        return provider(service.url(), Duration.ofSeconds(2), 32, Duration.ZERO, failOpen);
    }

    private static AuthRequest request(String clientId, String username, String password) throws Exception {
        return new AuthRequest(clientId, username, password == null ? null : password.getBytes(StandardCharsets.UTF_8),
                InetAddress.getByName("127.0.0.1"), false, List.of(), ProtocolVersion.V5);
    }

    private double count(String outcome) {
        return meters.get("fleetmq.auth.http.requests").tag("outcome", outcome).counter().count();
    }

    private static void assertUnavailable(AuthResult r) {
        AuthResult.Denied d = assertInstanceOf(AuthResult.Denied.class, r);
        assertEquals(ReasonCode.SERVER_UNAVAILABLE, d.code());
        assertEquals(RefusedConnection.AUTH_UNAVAILABLE, d.reason());
    }

    @Test
    @DisplayName("allow: the identity carries the service's rules, client type and expiry; the request says who connects")
    void allow() throws Exception {
        service.answer(FakeAuthService.Reply.json("{\"result\":\"allow\",\"clientType\":\"application\","
                + "\"publish\":[\"devices/${clientid}/up\"],\"subscribe\":[\"devices/+/down\",\"cmd/#\"],"
                + "\"expiresAt\":\"2099-01-01T00:00:00Z\"}"));
        AuthResult r = provider(false).authenticate(request("dev-1", "alice", "pä55"));
        Identity id = assertInstanceOf(AuthResult.Allowed.class, r).identity();
        assertEquals("http", id.provider());
        assertEquals("alice", id.username());
        assertEquals("APPLICATION", id.clientType());
        assertEquals(List.of("devices/${clientid}/up"), id.publish());
        assertEquals(List.of("devices/+/down", "cmd/#"), id.subscribe());
        assertEquals(Instant.parse("2099-01-01T00:00:00Z"), id.expiresAt());

        FakeAuthService.Received got = service.received().get(0);
        JsonNode body = JSON.readTree(got.body());
        assertEquals("dev-1", body.get("clientId").asText());
        assertEquals("alice", body.get("username").asText());
        assertEquals("pä55", body.get("password").asText());
        assertEquals("127.0.0.1", body.get("address").asText());
        assertTrue(body.get("commonName").isNull());
        assertEquals("MQTT 5", body.get("protocol").asText());
        assertEquals(false, body.get("tls").asBoolean());
        assertEquals(List.of("Bearer t0ken"), got.headers().get("Authorization"));
        assertEquals(List.of("application/json"), got.headers().get("Content-type"));
        assertEquals(1, count("allow"));
    }

    @Test
    @DisplayName("204 is an allow without rules")
    void noContent() throws Exception {
        service.answer(new FakeAuthService.Reply(204, null));
        Identity id = assertInstanceOf(AuthResult.Allowed.class, provider(false).authenticate(request("c", "u", "p")))
                .identity();
        assertEquals(List.of(), id.publish());
        assertEquals(List.of(), id.subscribe());
        assertNull(id.clientType());
    }

    @Test
    @DisplayName("deny: 0x86 recorded as bad_credentials")
    void deny() throws Exception {
        service.answer(FakeAuthService.Reply.json("{\"result\":\"deny\"}"));
        AuthResult.Denied d = assertInstanceOf(AuthResult.Denied.class,
                provider(false).authenticate(request("c", "u", "wrong")));
        assertEquals(ReasonCode.BAD_USER_NAME_OR_PASSWORD, d.code());
        assertEquals(RefusedConnection.BAD_CREDENTIALS, d.reason());
        assertEquals(1, count("deny"));
    }

    @Test
    @DisplayName("ignore: not this provider's client, the next one decides")
    void ignore() throws Exception {
        service.answer(FakeAuthService.Reply.json("{\"result\":\"ignore\"}"));
        assertSame(AuthResult.NOT_MINE, provider(false).authenticate(request("c", "u", "p")));
        assertEquals(1, count("ignore"));
    }

    @Test
    @DisplayName("an allow with a rule the broker cannot apply is refused as denied, counted as invalid")
    void invalidRules() throws Exception {
        service.answer(FakeAuthService.Reply.json("{\"result\":\"allow\",\"publish\":[\"a/#/b\"]}"));
        AuthResult.Denied d = assertInstanceOf(AuthResult.Denied.class,
                provider(false).authenticate(request("c", "u", "p")));
        assertEquals(ReasonCode.BAD_USER_NAME_OR_PASSWORD, d.code());
        assertEquals(1, count("invalid"));
    }

    @Test
    @DisplayName("a slow service times out: fail closed refuses with 0x88, fail open passes the CONNECT on")
    void slow() throws Exception {
        service.answer(FakeAuthService.Reply.json("{\"result\":\"allow\"}"));
        service.hold();
        HttpProvider closed = provider(service.url(), Duration.ofMillis(300), 32, Duration.ZERO, false);
        assertUnavailable(closed.authenticate(request("c", "u", "p")));
        assertEquals(1, count("timeout"));
        closed.close();
        HttpProvider open = provider(service.url(), Duration.ofMillis(300), 32, Duration.ZERO, true);
        assertSame(AuthResult.NOT_MINE, open.authenticate(request("c", "u", "p")));
        assertEquals(2, count("timeout"));
        assertTrue(meters.get("fleetmq.auth.http.latency").timer().count() >= 2);
    }

    @Test
    @DisplayName("nothing listening: the service is down, closed refuses with 0x88, open passes on")
    void nothingListening() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        URI nowhere = URI.create("http://127.0.0.1:" + port + "/auth");
        HttpProvider closed = provider(nowhere, Duration.ofSeconds(2), 32, Duration.ZERO, false);
        assertUnavailable(closed.authenticate(request("c", "u", "p")));
        closed.close();
        HttpProvider open = provider(nowhere, Duration.ofSeconds(2), 32, Duration.ZERO, true);
        assertSame(AuthResult.NOT_MINE, open.authenticate(request("c", "u", "p")));
        assertEquals(2, count("unreachable"));
    }

    @Test
    @DisplayName("status 500 and malformed bodies are the service being down, not a decision")
    void errors() throws Exception {
        HttpProvider p = provider(false);
        service.answer(new FakeAuthService.Reply(500, "{\"result\":\"allow\"}"));
        assertUnavailable(p.authenticate(request("c", "u", "p")));
        service.answer(FakeAuthService.Reply.json("{\"result\": allow"));
        assertUnavailable(p.authenticate(request("c", "u", "p")));
        service.answer(FakeAuthService.Reply.json("{\"result\":\"maybe\"}"));
        assertUnavailable(p.authenticate(request("c", "u", "p")));
        service.answer(FakeAuthService.Reply.json("[]"));
        assertUnavailable(p.authenticate(request("c", "u", "p")));
        service.answer(new FakeAuthService.Reply(302, null));
        assertUnavailable(p.authenticate(request("c", "u", "p")));
        assertEquals(5, count("error"));
        service.answer(FakeAuthService.Reply.json("{\"result\":\"allow\",\"pad\":\""
                + "x".repeat(HttpProvider.MAX_ANSWER_BYTES) + "\"}"));
        assertUnavailable(p.authenticate(request("c", "u", "p")));
        assertEquals(6, count("error"));
        service.answer(new FakeAuthService.Reply(500, null));
        HttpProvider open = provider(true);
        assertSame(AuthResult.NOT_MINE, open.authenticate(request("c", "u", "p")));
    }

    @Test
    @DisplayName("allow and deny answers are reused within the TTL for an identical CONNECT only; ignore is asked again")
    void cache() throws Exception {
        service.answer(body -> body.contains("\"password\":\"good\"")
                ? FakeAuthService.Reply.json("{\"result\":\"allow\",\"publish\":[\"a\"]}")
                : body.contains("\"password\":\"bad\"")
                        ? FakeAuthService.Reply.json("{\"result\":\"deny\"}")
                        : FakeAuthService.Reply.json("{\"result\":\"ignore\"}"));
        HttpProvider p = provider(service.url(), Duration.ofSeconds(2), 32, Duration.ofMinutes(5), false);
        assertNull(p.quick(request("c", "u", "good")), "nothing cached yet: needs a request");
        assertInstanceOf(AuthResult.Allowed.class, p.authenticate(request("c", "u", "good")));
        assertEquals(1, service.arrived());
        assertInstanceOf(AuthResult.Allowed.class, p.authenticate(request("c", "u", "good")));
        assertInstanceOf(AuthResult.Allowed.class, p.quick(request("c", "u", "good")));
        assertEquals(1, service.arrived(), "answered from the cache");

        assertInstanceOf(AuthResult.Denied.class, p.authenticate(request("c", "u", "bad")));
        assertInstanceOf(AuthResult.Denied.class, p.authenticate(request("c", "u", "bad")));
        assertEquals(2, service.arrived(), "a different password is a different request; a deny is cached too");

        assertSame(AuthResult.NOT_MINE, p.authenticate(request("c", "u", "other")));
        assertSame(AuthResult.NOT_MINE, p.authenticate(request("c", "u", "other")));
        assertEquals(4, service.arrived(), "ignore is not cached");
        assertInstanceOf(AuthResult.Allowed.class, p.authenticate(request("c2", "u", "good")));
        assertEquals(5, service.arrived(), "another client ID is another request");
        assertEquals(3.0, meters.get("fleetmq.auth.http.cache.hits").counter().count());
        assertEquals(3, p.cacheSize());
    }

    @Test
    @DisplayName("cache TTL 0: every CONNECT is asked")
    void noCache() throws Exception {
        service.answer(FakeAuthService.Reply.json("{\"result\":\"allow\"}"));
        HttpProvider p = provider(false);
        assertNull(p.quick(request("c", "u", "good")));
        p.authenticate(request("c", "u", "good"));
        p.authenticate(request("c", "u", "good"));
        assertEquals(2, service.arrived());
    }

    @Test
    @DisplayName("beyond max-concurrent requests in flight, a CONNECT is answered as down at once and counted busy")
    void concurrencyBound() throws Exception {
        service.answer(FakeAuthService.Reply.json("{\"result\":\"allow\"}"));
        service.hold();
        HttpProvider p = provider(service.url(), Duration.ofSeconds(20), 1, Duration.ZERO, false);
        CompletableFuture<AuthResult> first = CompletableFuture.supplyAsync(() -> {
            try {
                return p.authenticate(request("c1", "u", "p"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Await.until(Duration.ofSeconds(10), "the first request at the service", () -> service.arrived() == 1);
        assertUnavailable(p.authenticate(request("c2", "u", "p")));
        assertEquals(1, count("busy"));
        assertEquals(1, service.arrived(), "the second was never sent");
        service.release();
        assertInstanceOf(AuthResult.Allowed.class, first.get(10, TimeUnit.SECONDS));
        assertInstanceOf(AuthResult.Allowed.class, p.authenticate(request("c3", "u", "p")), "the permit came back");
    }

    @Test
    @DisplayName("a password that is not UTF-8 is not sent: the next provider decides")
    void binaryPassword() throws Exception {
        HttpProvider p = provider(false);
        AuthRequest r = new AuthRequest("c", "u", new byte[] {(byte) 0xC3, (byte) 0x28}, null, true, List.of(),
                ProtocolVersion.V3_1_1);
        assertSame(AuthResult.NOT_MINE, p.authenticate(r));
        assertEquals(0, service.arrived());
    }
}
