package io.fleetmq.app.security.jwt;

import static io.fleetmq.app.security.jwt.JwtProviderTest.CLOCK;
import static io.fleetmq.app.security.jwt.JwtProviderTest.NOW;
import static io.fleetmq.app.security.jwt.JwtProviderTest.allowed;
import static io.fleetmq.app.security.jwt.JwtProviderTest.badCredentials;
import static io.fleetmq.app.security.jwt.JwtProviderTest.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.nimbusds.jwt.JWTClaimsSet;
import com.sun.net.httpserver.HttpServer;
import io.fleetmq.app.security.provider.AuthResult;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Keys from a JWK set served over HTTP by a local server: caching, rotation through an unknown key
 * ID, the rate of fetches a client can cause, and an unreachable server with and without keys held.
 */
class JwksUrlTest {

    static final Duration MIN_INTERVAL = Duration.ofSeconds(30);

    final AtomicReference<String> served = new AtomicReference<>();
    final AtomicInteger fetches = new AtomicInteger();
    /** The endpoint's clock, moved by the test: the rate limit does not depend on how fast the machine is. */
    final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    HttpServer server;
    JwtProvider provider;
    JwksEndpoint endpoint;

    @AfterEach
    void stop() {
        if (provider != null) {
            provider.close();
        }
        if (server != null) {
            server.stop(0);
        }
    }

    private URI serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/jwks.json", exchange -> {
            fetches.incrementAndGet();
            byte[] body = served.get().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/jwks.json");
    }

    private void start(URI url) {
        SettingsBuilder s = new SettingsBuilder();
        s.jwksUrl = url;
        JwtSettings settings = s.build();
        endpoint = new JwksEndpoint(url, Duration.ofSeconds(2), Duration.ofHours(1), MIN_INTERVAL, nanos::get);
        provider = new JwtProvider(new TokenKeys(null, List.of(), endpoint), new TokenClaims(settings, CLOCK));
    }

    private static JWTClaimsSet claims() {
        return Tokens.claims(NOW, "c", b -> { });
    }

    private static void unavailable(AuthResult r) {
        AuthResult.Denied d = assertInstanceOf(AuthResult.Denied.class, r);
        assertEquals(ReasonCode.SERVER_UNAVAILABLE, d.code());
        assertEquals(RefusedConnection.AUTH_UNAVAILABLE, d.reason());
    }

    @Test
    @DisplayName("Keys are fetched in the background and cached; a rotated key (unknown kid) is fetched once, at most once per interval")
    void rotation() throws Exception {
        KeyPair k1 = Tokens.rsa();
        KeyPair k2 = Tokens.rsa();
        KeyPair k3 = Tokens.rsa();
        served.set(Tokens.jwks(Map.of("k1", k1)));
        start(serve());
        Await.until(Duration.ofSeconds(10), "the first fetch", () -> endpoint.keys() != null);
        assertEquals(1, fetches.get());

        for (int i = 0; i < 3; i++) {
            allowed(provider.authenticate(request("c", null, Tokens.rs256(k1, "k1", claims()))));
        }
        assertEquals(1, fetches.get(), "known keys come from memory");

        // The issuer rotates to k2; the first token signed with it makes the node fetch again.
        served.set(Tokens.jwks(Map.of("k2", k2)));
        nanos.addAndGet(MIN_INTERVAL.toNanos());
        allowed(provider.authenticate(request("c", null, Tokens.rs256(k2, "k2", claims()))));
        assertEquals(2, fetches.get());
        badCredentials(provider.authenticate(request("c", null, Tokens.rs256(k1, "k1", claims()))));

        // Made-up key IDs cause no fetch within the interval.
        served.set(Tokens.jwks(Map.of("k2", k2, "k3", k3)));
        for (int i = 0; i < 5; i++) {
            badCredentials(provider.authenticate(request("c", null, Tokens.rs256(k3, "k3", claims()))));
        }
        assertEquals(2, fetches.get(), "no fetch within the interval");
        nanos.addAndGet(MIN_INTERVAL.toNanos());
        allowed(provider.authenticate(request("c", null, Tokens.rs256(k3, "k3", claims()))));
        assertEquals(3, fetches.get());

        // A token signed by a key the set does not hold, with a kid it does hold: no fetch helps.
        nanos.addAndGet(MIN_INTERVAL.toNanos());
        badCredentials(provider.authenticate(request("c", null, Tokens.rs256(k1, "k2", claims()))));
        assertEquals(3, fetches.get());
    }

    @Test
    @DisplayName("JWKS unreachable and no key held: 0x88 Server unavailable; reachable again: allowed")
    void downWithoutKeys() throws Exception {
        KeyPair k1 = Tokens.rsa();
        URI url = URI.create("http://127.0.0.1:" + FreePorts.next() + "/jwks.json"); // nothing listens
        start(url);
        Await.until(Duration.ofSeconds(10), "the first fetch failed", () -> endpoint.unreachable());
        unavailable(provider.authenticate(request("c", null, Tokens.rs256(k1, "k1", claims()))));
        nanos.addAndGet(MIN_INTERVAL.toNanos());
        unavailable(provider.authenticate(request("c", null, Tokens.rs256(k1, null, claims()))));
        // HMAC tokens never depend on the set.
        badCredentials(provider.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, claims()))));
    }

    @Test
    @DisplayName("JWKS unreachable with keys held: tokens of those keys still connect; an unknown kid gets 0x88")
    void downWithKeys() throws Exception {
        KeyPair k1 = Tokens.rsa();
        KeyPair k2 = Tokens.rsa();
        served.set(Tokens.jwks(Map.of("k1", k1)));
        start(serve());
        Await.until(Duration.ofSeconds(10), "the first fetch", () -> endpoint.keys() != null);
        server.stop(0);
        server = null;

        nanos.addAndGet(MIN_INTERVAL.toNanos());
        unavailable(provider.authenticate(request("c", null, Tokens.rs256(k2, "k2", claims()))));
        allowed(provider.authenticate(request("c", null, Tokens.rs256(k1, "k1", claims()))));
        badCredentials(provider.authenticate(request("c", null, Tokens.rs256(k2, "k1", claims()))));
    }

    @Test
    @DisplayName("An EC key from the set verifies ES256 tokens")
    void ecKeys() throws Exception {
        KeyPair ec = Tokens.ec();
        served.set(Tokens.jwksEc("e1", ec));
        start(serve());
        allowed(provider.authenticate(request("c", null, Tokens.es256(ec, "e1", claims()))));
        badCredentials(provider.authenticate(request("c", null, Tokens.es256(Tokens.ec(), "e1", claims()))));
    }
}
