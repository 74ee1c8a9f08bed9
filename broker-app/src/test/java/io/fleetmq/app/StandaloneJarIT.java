package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.BrokerProcess;
import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.Persisted;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real jar, started the way the README says, stopped with SIGTERM, started again. */
class StandaloneJarIT {

    private static final Duration START = Duration.ofMinutes(3);
    private static final Duration STOP = Duration.ofMinutes(1);
    private static final String READY = "FleetMQ node jar-node ready in ";

    @TempDir
    Path workDir;

    @Test
    void jarStartsStandaloneStopsOnSigtermAndKeepsItsDataAcrossARestart() throws Exception {
        int http = FreePorts.next();
        int mqtt = FreePorts.next();
        int kafka = FreePorts.next();
        int redis = FreePorts.next();
        int postgres = FreePorts.next();
        Map<String, String> env = new HashMap<>();
        env.put("BROKER_DATA_DIR", workDir.resolve("data").toString());
        env.put("BIND_ADDRESS", "127.0.0.1");
        env.put("BROKER_NODE_ID", "jar-node");
        env.put("HTTP_PORT", String.valueOf(http));
        env.put("MQTT_TCP_PORT", String.valueOf(mqtt));
        env.put("MQTT_WS_PORT", String.valueOf(FreePorts.next()));
        env.put("EMBEDDED_KAFKA_PORT", String.valueOf(kafka));
        env.put("EMBEDDED_KAFKA_CONTROLLER_PORT", String.valueOf(FreePorts.next()));
        env.put("EMBEDDED_REDIS_PORT", String.valueOf(redis));
        env.put("EMBEDDED_POSTGRES_PORT", String.valueOf(postgres));
        String bootstrap = "127.0.0.1:" + kafka;
        String dbUrl = "jdbc:postgresql://127.0.0.1:" + postgres + "/fleetmq";

        List<ProcessHandle> children;
        String dbPassword;
        try (BrokerProcess broker = BrokerProcess.start(workDir, env)) {
            broker.awaitOutput(READY, START);
            String out = broker.stdout();
            assertTrue(out.contains("Listening for MQTT over TCP on /127.0.0.1:" + mqtt), out);
            assertTrue(out.contains("Listening for HTTP (admin, /metrics, /health) on /127.0.0.1:" + http), out);
            assertTrue(out.contains("TLS listener disabled"), out);
            assertEquals(1, out.lines().filter(l -> l.contains(READY)).count(), out);
            assertFalse(out.contains("\tat "), "no stack traces at start-up:\n" + out);
            assertTrue(Http.isReady(http));

            Persisted.writeKafka(bootstrap, "jar-restart-check", "k", "v1");
            // The embedded database's password is generated once and kept in the data directory.
            dbPassword = java.nio.file.Files.readString(workDir.resolve("data").resolve("postgres-password")).trim();
            Persisted.writeRow(dbUrl, "fleetmq", dbPassword, "jar-restart-check", "{\"run\": 1}");
            // Redis is a child process and PostgreSQL a daemon started by pg_ctl; SIGTERM must
            // not leave either behind.
            children = new java.util.ArrayList<>(ProcessHandle.of(broker.pid()).orElseThrow().descendants().toList());
            long postmaster = Long.parseLong(java.nio.file.Files.readAllLines(
                    workDir.resolve("data").resolve("postgres").resolve("postmaster.pid")).get(0).trim());
            children.add(ProcessHandle.of(postmaster).orElseThrow());
            assertTrue(children.stream().anyMatch(p -> commandLine(p).contains("redis-server")),
                    "embedded Redis runs as a child process");

            int exit = broker.terminate(STOP);
            assertEquals(143, exit, "exit code of a JVM stopped by SIGTERM");
            String stopped = broker.stdout();
            assertTrue(stopped.contains("Stopping (signal received)"), stopped);
            assertTrue(stopped.contains("FleetMQ node jar-node stopped"), stopped);
        }
        for (ProcessHandle child : children) {
            Await.until(Duration.ofSeconds(10), "process " + child.pid() + " to end", () -> !isRunning(child));
        }
        for (int port : List.of(http, mqtt, kafka, redis, postgres)) {
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
                assertEquals(port, s.getLocalPort());
            }
        }

        try (BrokerProcess again = BrokerProcess.start(workDir, env)) {
            again.awaitOutput(READY, START);
            assertEquals(List.of("k=v1"), Persisted.readKafka(bootstrap, "jar-restart-check"));
            assertEquals("{\"run\": 1}", Persisted.readRow(dbUrl, "fleetmq", dbPassword, "jar-restart-check"));
            assertEquals(143, again.terminate(STOP));
        }
    }

    /**
     * Alive and not a zombie: an orphan that has exited stays in the process table until the
     * container's init process reaps it, which can take a while, but it no longer runs.
     */
    /**
     * The command line as /proc shows it: Debian's redis-server runs as redis-check-rdb, for which the JDK knows
     * only the executable.
     */
    private static String commandLine(ProcessHandle process) {
        try {
            return java.nio.file.Files.readString(Path.of("/proc", String.valueOf(process.pid()), "cmdline"))
                    .replace('\0', ' ');
        } catch (java.io.IOException e) {
            return process.info().commandLine().orElse(process.info().command().orElse(""));
        }
    }

    private static boolean isRunning(ProcessHandle process) {
        if (!process.isAlive()) {
            return false;
        }
        try {
            String stat = java.nio.file.Files.readString(Path.of("/proc", String.valueOf(process.pid()), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (java.io.IOException e) {
            return false; // gone between the two checks
        }
    }
}
