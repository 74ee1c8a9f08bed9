package io.fleetmq.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.fleetmq.embedded.RedisBinary;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TestServicesTest {

    @Test
    void sharedServicesAreReachable() throws Exception {
        TestServices services = TestServices.shared();
        assertSame(services, TestServices.shared(), "started once per JVM");

        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, services.kafkaBootstrapServers()))) {
            assertFalse(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).isEmpty(), "Kafka has a broker");
        }

        RedisClient redis = RedisClient.create(services.redisUrl());
        try (StatefulRedisConnection<String, String> connection = redis.connect()) {
            assertEquals("PONG", connection.sync().ping());
        } finally {
            redis.shutdown(0, 5, TimeUnit.SECONDS);
        }

        try (Connection connection = DriverManager.getConnection(
                services.databaseUrl(), services.databaseUser(), services.databasePassword());
             Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery("SELECT 1")) {
            assertTrue(result.next());
            assertEquals(1, result.getInt(1));
        }
    }

    @Test
    void environmentReplacesEachEmbeddedService() {
        TestServices external = TestServices.create(Map.of(
                TestServices.KAFKA_ENV, "kafka.example:9092",
                TestServices.REDIS_ENV, "redis://redis.example:6379",
                TestServices.DATABASE_URL_ENV, "jdbc:postgresql://db.example:5432/fleetmq",
                TestServices.DATABASE_USER_ENV, "ci",
                TestServices.DATABASE_PASSWORD_ENV, "secret"));

        assertFalse(external.anyEmbedded(), "nothing is started when everything comes from the environment");
        assertEquals("kafka.example:9092", external.kafkaBootstrapServers());
        assertEquals("redis://redis.example:6379", external.redisUrl());
        assertEquals("jdbc:postgresql://db.example:5432/fleetmq", external.databaseUrl());
        assertEquals("ci", external.databaseUser());
        assertEquals("secret", external.databasePassword());
    }

    @Test
    void servicesMissingFromTheEnvironmentAreEmbedded() {
        // Only Redis is left out, as it starts in milliseconds; the JVM's shutdown hook stops it again.
        TestServices mixed = TestServices.create(Map.of(
                TestServices.KAFKA_ENV, "kafka.example:9092",
                TestServices.DATABASE_URL_ENV, "jdbc:postgresql://db.example:5432/fleetmq"));

        assertTrue(mixed.anyEmbedded());
        assertEquals("kafka.example:9092", mixed.kafkaBootstrapServers());
        assertEquals("jdbc:postgresql://db.example:5432/fleetmq", mixed.databaseUrl());
        assertTrue(mixed.redisUrl().matches("redis://127\\.0\\.0\\.1:\\d+"), mixed.redisUrl());
    }

    @ParameterizedTest(name = "{0} binary")
    @ValueSource(strings = {"bundled", "system"})
    void embeddedRedisRunsTheChosenBinary(String binary) throws Exception {
        TestServices mixed = TestServices.create(Map.of(
                TestServices.KAFKA_ENV, "kafka.example:9092",
                TestServices.DATABASE_URL_ENV, "jdbc:postgresql://db.example:5432/fleetmq",
                TestServices.REDIS_BINARY_ENV, binary));

        RedisClient redis = RedisClient.create(mixed.redisUrl());
        try (StatefulRedisConnection<String, String> connection = redis.connect()) {
            String executable = connection.sync().info("server").lines()
                    .filter(line -> line.startsWith("executable:"))
                    .map(line -> line.substring("executable:".length()).strip())
                    .findFirst().orElseThrow();
            assertEquals(RedisBinary.of(binary).executable().toPath().toRealPath(), Path.of(executable).toRealPath());
        } finally {
            redis.shutdown(0, 5, TimeUnit.SECONDS);
        }
    }
}
