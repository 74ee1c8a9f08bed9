package io.fleetmq.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A JVM killed with SIGKILL leaves its PostgreSQL running, and its Redis too if the Redis's guard is gone as well;
 * the next start must take over cleanly. Otherwise the guard stops the Redis. Run with the bundled Redis and with
 * the system's, which shows itself differently to the JDK.
 */
class CrashRecoveryTest {

    @TempDir
    Path dataDir;

    /** Whatever the owner JVM started; ended after the test whatever its outcome, so no run leaves processes. */
    private final List<ProcessHandle> ownerProcesses = new ArrayList<>();

    @AfterEach
    void endWhatTheOwnerLeft() {
        for (ProcessHandle process : ownerProcesses) {
            Processes.end("left by the owner JVM", process, false, Duration.ofSeconds(10), Duration.ofSeconds(10));
        }
    }

    @ParameterizedTest(name = "{0} Redis binary")
    @ValueSource(strings = {"bundled", "system"})
    void servicesLeftRunningByAKilledJvmAreReplacedAndTheirDataKept(String binary) throws Exception {
        // The guard is killed first, as if it had been killed with the JVM, so that Redis is left over.
        runOwnerAndKillIt(binary, "all", true);

        long redisPid = pid(dataDir.resolve("redis").resolve("redis.pid"));
        long postgresPid = pid(dataDir.resolve("postgres").resolve("postmaster.pid"));
        assertTrue(running(redisPid), "Redis outlived its killed JVM");
        assertTrue(running(postgresPid), "PostgreSQL outlived its killed JVM");
        EmbeddedRedisServerTest.assertRunsBinary(RedisBinary.of(binary), ProcessHandle.of(redisPid).orElseThrow());

        try (EmbeddedServices services = EmbeddedServices.start(
                EmbeddedServicesConfig.allOnLoopback(dataDir).withRedisBinary(RedisBinary.of(binary)))) {
            assertFalse(running(redisPid), "left-over Redis was stopped");
            assertFalse(running(postgresPid), "left-over PostgreSQL was stopped");

            RedisClient redis = RedisClient.create(services.redisUrl());
            try (StatefulRedisConnection<String, String> connection = redis.connect()) {
                assertEquals(CrashedOwner.VALUE, connection.sync().get(CrashedOwner.KEY));
            } finally {
                redis.shutdown(0, 5, TimeUnit.SECONDS);
            }
            try (Connection connection = DriverManager.getConnection(
                    services.databaseUrl(), services.databaseUser(), services.databasePassword());
                 Statement statement = connection.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT body FROM crash_check")) {
                assertTrue(rows.next());
                assertEquals(CrashedOwner.VALUE, rows.getString(1));
            }
            assertEquals(List.of(CrashedOwner.VALUE), kafkaValues(services.kafkaBootstrapServers()));
        }
    }

    @ParameterizedTest(name = "{0} Redis binary")
    @ValueSource(strings = {"bundled", "system"})
    void redisOfAKilledJvmIsStoppedByItsGuardAndKeepsItsData(String binary) throws Exception {
        // Read before the owner dies: the guard may stop Redis, which removes its pid file, at once.
        long redisPid = runOwnerAndKillIt(binary, "redis", false);
        assertTrue(redisPid > 0, "the owner ran Redis");
        ProcessHandle redis = ProcessHandle.of(redisPid).orElse(null); // null: the guard was quicker than this look
        assertTrue(redis == null || Processes.awaitGone(redis, Duration.ofSeconds(30)),
                "the guard stops Redis once its JVM is dead");

        EmbeddedRedisServer restarted = new EmbeddedRedisServer(dataDir, "127.0.0.1", 0, RedisBinary.of(binary));
        restarted.start();
        RedisClient client = RedisClient.create(restarted.url());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            assertEquals(CrashedOwner.VALUE, connection.sync().get(CrashedOwner.KEY));
        } finally {
            client.shutdown(0, 5, TimeUnit.SECONDS);
            restarted.stop();
        }
    }

    /**
     * Runs {@link CrashedOwner} with {@code services} until it is ready, then kills it with SIGKILL.
     *
     * @return the pid of its Redis, read while the owner still ran (-1 if it runs none)
     */
    private long runOwnerAndKillIt(String binary, String services, boolean killGuardFirst) throws Exception {
        Process owner = new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                CrashedOwner.class.getName(), dataDir.toString(), binary, services)
                .redirectErrorStream(true)
                .start();
        List<String> ownerOutput = new ArrayList<>();
        long redisPid;
        try {
            CompletableFuture<Boolean> ready = CompletableFuture.supplyAsync(() -> awaitReady(owner, ownerOutput));
            assertTrue(ready.get(90, TimeUnit.SECONDS), () -> "owner JVM never got ready: " + ownerOutput);
            Path redisPidFile = dataDir.resolve("redis").resolve("redis.pid");
            redisPid = Files.exists(redisPidFile) ? pid(redisPidFile) : -1;
        } finally {
            ownerProcesses.addAll(owner.descendants().toList());
            if (killGuardFirst) {
                List<ProcessHandle> guards = ownerProcesses.stream()
                        .filter(p -> Processes.commandLine(p).contains("fleetmq-guard")).toList();
                assertEquals(1, guards.size(), () -> "one guard among " + ownerProcesses.stream()
                        .map(Processes::commandLine).toList());
                guards.forEach(g -> assertTrue(Processes.end("guard", g, false, Duration.ZERO, Duration.ofSeconds(10))));
            }
            owner.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        return redisPid;
    }

    private static boolean awaitReady(Process owner, List<String> output) {
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                synchronized (output) {
                    output.add(line);
                }
                if (line.equals(CrashedOwner.READY)) {
                    return true;
                }
            }
            return false;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static List<String> kafkaValues(String bootstrapServers) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
            TopicPartition partition = new TopicPartition(CrashedOwner.TOPIC, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (values.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }

    private static long pid(Path pidFile) throws java.io.IOException {
        return Long.parseLong(Files.readAllLines(pidFile, StandardCharsets.UTF_8).get(0).strip());
    }

    /** Alive and not a zombie waiting for init to reap it. */
    private static boolean running(long pid) {
        return ProcessHandle.of(pid).map(Processes::running).orElse(false);
    }
}
