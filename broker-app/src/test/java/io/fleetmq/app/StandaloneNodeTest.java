package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.Persisted;
import io.fleetmq.testkit.FreePorts;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standalone start-up path in this JVM: the node brings up its embedded Kafka, Redis and
 * PostgreSQL, reports ready, and finds what was written before a restart.
 */
class StandaloneNodeTest {

    @TempDir
    Path dataDir;

    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("BROKER_DATA_DIR", dataDir.toString());
        env.put("BROKER_NODE_ID", "standalone-test");
        env.put("BIND_ADDRESS", "127.0.0.1");
        env.put("MQTT_TCP_PORT", "0");
        env.put("MQTT_WS_PORT", "0");
        env.put("HTTP_PORT", "0");
        env.put("EMBEDDED_KAFKA_PORT", String.valueOf(FreePorts.next()));
        env.put("EMBEDDED_KAFKA_CONTROLLER_PORT", String.valueOf(FreePorts.next()));
        env.put("EMBEDDED_REDIS_PORT", String.valueOf(FreePorts.next()));
        env.put("EMBEDDED_POSTGRES_PORT", String.valueOf(FreePorts.next()));
        return env;
    }

    private static BrokerNode start(Map<String, String> env) {
        return (BrokerNode) new Launcher(env::get, new PrintStream(new ByteArrayOutputStream())).run("standalone");
    }

    @Test
    void startsReadyServesHealthAndMetricsAndKeepsDataAcrossARestart() throws Exception {
        Map<String, String> env = env();
        String bootstrap;
        String dbUrl;
        String dbUser;
        String dbPassword;
        int httpPort;
        try (BrokerNode node = start(env)) {
            httpPort = node.httpPort();
            HttpResponse<String> ready = Http.get(httpPort, "/health/ready");
            assertEquals(200, ready.statusCode(), ready.body());
            JsonNode body = new ObjectMapper().readTree(ready.body());
            assertEquals("UP", body.get("status").asText());
            for (String dep : List.of("kafka", "redis", "postgres")) {
                assertEquals("UP", body.get("checks").get(dep).get("status").asText(), dep);
            }
            assertEquals(200, Http.get(httpPort, "/health/live").statusCode());

            HttpResponse<String> metrics = Http.get(httpPort, "/metrics");
            assertEquals(200, metrics.statusCode());
            assertTrue(metrics.headers().firstValue("content-type").orElse("").startsWith("text/plain"));
            assertTrue(metrics.body().contains("jvm_memory_used_bytes{"), "JVM meters");
            assertTrue(metrics.body().contains("process_cpu_usage{"), "process meters");
            assertTrue(metrics.body().contains("fleetmq_startup_seconds{node=\"standalone-test\"}"), "startup gauge");

            assertEquals(404, Http.get(httpPort, "/nope").statusCode());
            assertEquals(405, Http.send(httpPort, "/health/ready", "POST").statusCode());

            assertTrue(node.mqttPort("TCP") > 0);
            assertTrue(node.mqttPort("WebSocket") > 0);
            assertEquals(-1, node.mqttPort("TLS"));

            bootstrap = node.kafkaSettings().bootstrapServers();
            dbUrl = node.databaseSettings().url();
            dbUser = node.databaseSettings().user();
            dbPassword = node.databaseSettings().password();
            assertTrue(bootstrap.endsWith(":" + env.get("EMBEDDED_KAFKA_PORT")), bootstrap);
            Persisted.writeKafka(bootstrap, "restart-check", "k", "before-restart");
            Persisted.writeRow(dbUrl, dbUser, dbPassword, "restart-check", "{\"written\":\"before\"}");
        }

        // Everything was released: the admin port and the embedded services' ports are free again.
        assertPortFree(httpPort);
        assertPortFree(Integer.parseInt(env.get("EMBEDDED_KAFKA_PORT")));
        assertPortFree(Integer.parseInt(env.get("EMBEDDED_REDIS_PORT")));
        assertPortFree(Integer.parseInt(env.get("EMBEDDED_POSTGRES_PORT")));
        assertNotNull(dataDir.resolve("kafka").toFile().list(), "Kafka data stays in the data directory");

        try (BrokerNode again = start(env)) {
            assertTrue(Http.isReady(again.httpPort()));
            assertEquals(List.of("k=before-restart"), Persisted.readKafka(bootstrap, "restart-check"));
            assertEquals("{\"written\": \"before\"}", Persisted.readRow(dbUrl, dbUser, dbPassword, "restart-check"));
        }
    }

    @Test
    void readinessIsDownWhileStoppingAndLivenessAnswersUntilTheEnd() throws Exception {
        BrokerNode node = start(env());
        int port = node.httpPort();
        assertTrue(Http.isReady(port));
        node.readiness().stopping();
        HttpResponse<String> r = Http.get(port, "/health/ready");
        assertEquals(503, r.statusCode());
        assertTrue(r.body().contains("\"phase\":\"stopping\""), r.body());
        node.close();
        assertFalse(Http.isReady(port));
    }

    private static void assertPortFree(int port) throws Exception {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
            assertEquals(port, s.getLocalPort());
        }
    }
}
