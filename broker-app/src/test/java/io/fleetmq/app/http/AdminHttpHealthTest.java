package io.fleetmq.app.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.app.metrics.DependencyMeters;
import io.fleetmq.app.metrics.Metrics;
import io.fleetmq.app.support.Http;
import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.health.Readiness;
import io.fleetmq.testkit.Await;
import io.fleetmq.persistence.auth.PasswordHashes;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * /health/ready and /health/live over HTTP with dependencies that are down or hang: Kafka decides
 * readiness, PostgreSQL and Redis only degrade the node, and probes never queue up behind a hang.
 */
class AdminHttpHealthTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger postgresProbes = new AtomicInteger();
    private final AtomicBoolean kafkaUp = new AtomicBoolean(true);
    private final AtomicBoolean redisUp = new AtomicBoolean(false);
    private Metrics metrics;
    private Readiness readiness;
    private AdminHttpServer server;

    @BeforeEach
    void start() {
        metrics = new Metrics("health-test");
        readiness = new Readiness(Duration.ofMillis(300));
        register(check("kafka", kafkaUp::get), Readiness.Impact.REQUIRED);
        register(check("postgres", () -> {
            postgresProbes.incrementAndGet();
            try {
                release.await(); // a database that accepts the connection and never answers
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return true;
        }), Readiness.Impact.DEGRADES);
        register(check("redis", redisUp::get), Readiness.Impact.DEGRADES);
        readiness.started();
        server = AdminHttpServer.start("127.0.0.1", 0, readiness, metrics,
                new AdminApi(change -> { }, Duration.ofHours(1), new PasswordHashes(4, 14, 1_000)));
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.close();
        readiness.close();
        metrics.close();
    }

    private void register(HealthCheck check, Readiness.Impact impact) {
        readiness.register(check, impact);
        DependencyMeters.register(metrics.registry(), readiness, check.name(), impact);
    }

    private static HealthCheck check(String name, java.util.function.BooleanSupplier up) {
        return new HealthCheck() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public HealthStatus check() {
                return up.getAsBoolean() ? HealthStatus.up(name + " answers") : HealthStatus.down("Connection refused");
            }
        };
    }

    @Test
    void degradedDependenciesKeepTheNodeReadyAndAreNamedInBothHealthBodies() throws Exception {
        int port = server.port();
        HttpResponse<String> ready = Http.get(port, "/health/ready");
        assertEquals(200, ready.statusCode(), ready.body());
        JsonNode body = JSON.readTree(ready.body());
        assertEquals("DEGRADED", body.get("status").asText());
        assertEquals("started", body.get("phase").asText());
        assertEquals(List.of("postgres", "redis"), names(body.get("degraded")));
        assertEquals("UP", body.get("checks").get("kafka").get("status").asText());
        assertTrue(body.get("checks").get("kafka").get("required").asBoolean());
        assertEquals("DEGRADED", body.get("checks").get("redis").get("status").asText());
        assertFalse(body.get("checks").get("redis").get("required").asBoolean());
        assertEquals("Connection refused", body.get("checks").get("redis").get("detail").asText());
        assertEquals("no answer within 300 ms", body.get("checks").get("postgres").get("detail").asText());

        HttpResponse<String> live = Http.get(port, "/health/live");
        assertEquals(200, live.statusCode());
        JsonNode liveBody = JSON.readTree(live.body());
        assertEquals("UP", liveBody.get("status").asText());
        assertTrue(names(liveBody.get("degraded")).contains("redis"), live.body());

        redisUp.set(true);
        kafkaUp.set(false);
        HttpResponse<String> down = Http.get(port, "/health/ready");
        assertEquals(503, down.statusCode(), down.body());
        JsonNode downBody = JSON.readTree(down.body());
        assertEquals("DOWN", downBody.get("status").asText());
        assertEquals("DOWN", downBody.get("checks").get("kafka").get("status").asText());
        assertEquals(List.of("postgres"), names(downBody.get("degraded")));
    }

    @Test
    void concurrentProbesShareOneHangingCheckAndAllAnswer() throws Exception {
        int port = server.port();
        List<CompletableFuture<HttpResponse<String>>> probes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            probes.add(CompletableFuture.supplyAsync(() -> Http.get(port, "/health/ready")));
        }
        for (CompletableFuture<HttpResponse<String>> p : probes) {
            HttpResponse<String> r = p.get();
            assertEquals(200, r.statusCode(), r.body());
        }
        assertEquals(1, postgresProbes.get(), "one probe of the hanging database, shared by all requests");
    }

    @Test
    void metricsCarryAGaugePerDependency() {
        int port = server.port();
        Await.until(Duration.ofSeconds(20), "dependency gauges", () -> {
            String m = Http.get(port, "/metrics").body();
            return m.contains("fleetmq_dependency_up{dependency=\"kafka\",node=\"health-test\",required=\"true\"} 1.0")
                    && m.contains("fleetmq_dependency_up{dependency=\"redis\",node=\"health-test\",required=\"false\"} 0.0");
        });
        redisUp.set(true);
        Await.until(Duration.ofSeconds(20), "redis gauge back to 1", () -> Http.get(port, "/metrics").body()
                .contains("fleetmq_dependency_up{dependency=\"redis\",node=\"health-test\",required=\"false\"} 1.0"));
    }

    private static List<String> names(JsonNode array) {
        List<String> names = new ArrayList<>();
        array.forEach(n -> names.add(n.asText()));
        return names;
    }
}
