package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.BrokerProcess;
import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.Persisted;
import io.fleetmq.testkit.FreePorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code services} prints the addresses of its embedded services; {@code node} runs on them. */
class ServicesAndNodeIT {

    @TempDir
    Path workDir;

    @Test
    void nodeRunsOnTheServicesOfTheServicesCommand() throws Exception {
        Map<String, String> servicesEnv = new HashMap<>();
        servicesEnv.put("BROKER_DATA_DIR", workDir.resolve("services-data").toString());
        servicesEnv.put("EMBEDDED_KAFKA_PORT", String.valueOf(FreePorts.next()));
        servicesEnv.put("EMBEDDED_KAFKA_CONTROLLER_PORT", String.valueOf(FreePorts.next()));
        servicesEnv.put("EMBEDDED_REDIS_PORT", String.valueOf(FreePorts.next()));
        servicesEnv.put("EMBEDDED_POSTGRES_PORT", String.valueOf(FreePorts.next()));

        try (BrokerProcess services = BrokerProcess.start(workDir.resolve("services"), servicesEnv, "services")) {
            services.awaitOutput(Launcher.SERVICES_READY, Duration.ofMinutes(3));
            Map<String, String> addresses = Persisted.parseEnvLines(services.stdout());
            assertEquals("127.0.0.1:" + servicesEnv.get("EMBEDDED_KAFKA_PORT"), addresses.get("KAFKA_BOOTSTRAP_SERVERS"));
            assertEquals("redis://127.0.0.1:" + servicesEnv.get("EMBEDDED_REDIS_PORT"), addresses.get("REDIS_URL"));
            assertEquals("jdbc:postgresql://127.0.0.1:" + servicesEnv.get("EMBEDDED_POSTGRES_PORT") + "/fleetmq",
                    addresses.get("DATABASE_URL"));
            assertFalse(addresses.containsKey("DATABASE_PASSWORD"), "the password is not printed");
            // The file holds what was printed plus the secrets.
            Map<String, String> file = Persisted.parseEnvLines(
                    Files.readString(workDir.resolve("services-data").resolve(Launcher.SERVICES_ENV)));
            Map<String, String> printedPlusSecret = new java.util.LinkedHashMap<>(addresses);
            printedPlusSecret.put("DATABASE_PASSWORD", file.get("DATABASE_PASSWORD"));
            assertEquals(printedPlusSecret, file);

            Map<String, String> nodeEnv = new HashMap<>(file);
            int http = FreePorts.next();
            Path nodeData = workDir.resolve("node-data");
            nodeEnv.put("BROKER_DATA_DIR", nodeData.toString());
            nodeEnv.put("BROKER_NODE_ID", "node-a");
            nodeEnv.put("HTTP_PORT", String.valueOf(http));
            nodeEnv.put("MQTT_TCP_PORT", String.valueOf(FreePorts.next()));
            nodeEnv.put("MQTT_WS_PORT", String.valueOf(FreePorts.next()));
            try (BrokerProcess node = BrokerProcess.start(workDir.resolve("node"), nodeEnv, "node")) {
                node.awaitOutput("FleetMQ node node-a ready in ", Duration.ofMinutes(2));
                assertTrue(Http.isReady(http));
                assertTrue(Http.get(http, "/health/ready").body().contains(addresses.get("KAFKA_BOOTSTRAP_SERVERS")));
                assertFalse(Files.exists(nodeData.resolve("kafka")), "node mode starts no embedded Kafka");
                assertFalse(Files.exists(nodeData.resolve("postgres")), "node mode starts no embedded PostgreSQL");
                assertEquals(143, node.terminate(Duration.ofMinutes(1)));
            }
            assertEquals(143, services.terminate(Duration.ofMinutes(1)));
            assertTrue(services.stdout().contains("Stopping (signal received)"));
        }
    }
}
