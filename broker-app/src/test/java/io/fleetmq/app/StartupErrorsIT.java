package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.BrokerProcess;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TestServices;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad configuration stops the real jar with one line on standard error naming the setting, and no
 * stack trace anywhere in its output.
 */
class StartupErrorsIT {

    private static final Duration EXIT = Duration.ofMinutes(1);

    @TempDir
    Path workDir;

    /** A node on the test kit's services, so only the setting under test is wrong. */
    private Map<String, String> nodeEnv() {
        TestServices s = TestServices.shared();
        Map<String, String> env = new HashMap<>();
        env.put("BROKER_DATA_DIR", workDir.resolve("data").toString());
        env.put("KAFKA_BOOTSTRAP_SERVERS", s.kafkaBootstrapServers());
        env.put("REDIS_URL", s.redisUrl());
        env.put("DATABASE_URL", s.databaseUrl());
        env.put("DATABASE_USER", s.databaseUser());
        env.put("DATABASE_PASSWORD", s.databasePassword());
        env.put("HTTP_PORT", String.valueOf(FreePorts.next()));
        env.put("MQTT_TCP_PORT", String.valueOf(FreePorts.next()));
        env.put("MQTT_WS_PORT", String.valueOf(FreePorts.next()));
        return env;
    }

    private static String oneLine(BrokerProcess p) {
        String err = p.stderr().strip();
        assertEquals(1, err.lines().count(), "exactly one line on stderr:\n" + err);
        assertFalse((p.stdout() + p.stderr()).contains("\tat "), "no stack trace:\n" + p.stdout());
        return err;
    }

    @Test
    void unknownKeyInTheConfigFile() throws Exception {
        Path config = workDir.resolve("broker.yml");
        Files.writeString(config, "listeners:\n  tcp:\n    prot: 1884\n");
        try (BrokerProcess p = BrokerProcess.start(workDir, nodeEnv(), "node", "--config", config.toString())) {
            assertEquals(2, p.awaitExit(EXIT));
            String err = oneLine(p);
            assertTrue(err.startsWith("fleetmq: configuration error: unknown setting 'listeners.tcp.prot' in "), err);
        }
    }

    @Test
    void badValueNamesSettingAndVariable() throws Exception {
        Map<String, String> env = nodeEnv();
        env.put("MQTT_TCP_PORT", "18830000");
        try (BrokerProcess p = BrokerProcess.start(workDir, env, "node")) {
            assertEquals(2, p.awaitExit(EXIT));
            assertTrue(oneLine(p).contains("listeners.tcp.port (MQTT_TCP_PORT)"), p.stderr());
        }
    }

    @Test
    void mqttPortInUse() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Map<String, String> env = nodeEnv();
            env.put("MQTT_TCP_PORT", String.valueOf(taken.getLocalPort()));
            try (BrokerProcess p = BrokerProcess.start(workDir, env, "node")) {
                assertEquals(1, p.awaitExit(EXIT));
                String err = oneLine(p);
                assertTrue(err.contains("cannot bind 127.0.0.1:" + taken.getLocalPort()), err);
                assertTrue(err.contains("listeners.tcp.port (MQTT_TCP_PORT)"), err);
            }
        }
    }

    @Test
    void httpPortInUse() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Map<String, String> env = nodeEnv();
            env.put("HTTP_PORT", String.valueOf(taken.getLocalPort()));
            try (BrokerProcess p = BrokerProcess.start(workDir, env, "node")) {
                assertEquals(1, p.awaitExit(EXIT));
                assertTrue(oneLine(p).contains("listeners.http.port (HTTP_PORT)"), p.stderr());
            }
        }
    }

    @Test
    void unreachableExternalKafka() throws Exception {
        Map<String, String> env = nodeEnv();
        env.put("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:" + FreePorts.next());
        env.put("KAFKA_REQUEST_TIMEOUT", "2s");
        try (BrokerProcess p = BrokerProcess.start(workDir, env, "node")) {
            assertEquals(1, p.awaitExit(EXIT));
            String err = oneLine(p);
            assertTrue(err.contains("KAFKA_BOOTSTRAP_SERVERS"), err);
            assertTrue(err.contains("unreachable"), err);
        }
    }

    @Test
    void aTopicTooSmallForTheMaximumPacketSizeNamesBothSettings() throws Exception {
        Map<String, String> env = nodeEnv();
        String prefix = "s" + java.util.UUID.randomUUID().toString().substring(0, 8) + ".";
        env.put("KAFKA_TOPIC_PREFIX", prefix);
        java.util.Properties props = new java.util.Properties();
        props.put("bootstrap.servers", TestServices.shared().kafkaBootstrapServers());
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(props)) {
            // Created by hand with Kafka's default limit, 1 MiB + 12 bytes: a PUBLISH of the default
            // packet limit, 1 MiB, cannot be stored in it with its envelope.
            admin.createTopics(java.util.List.of(new org.apache.kafka.clients.admin.NewTopic(prefix + "publish", 16,
                    (short) 1).configs(Map.of("max.message.bytes", "1048588")))).all().get();
        }
        try (BrokerProcess p = BrokerProcess.start(workDir, env, "node")) {
            assertEquals(1, p.awaitExit(EXIT));
            String err = oneLine(p);
            assertTrue(err.contains("mqtt.max-packet-size (MQTT_MAX_PACKET_SIZE)"), err);
            assertTrue(err.contains(prefix + "publish has max.message.bytes=1048588"), err);
        }
    }

    @Test
    void unreachableExternalDatabase() throws Exception {
        Map<String, String> env = nodeEnv();
        env.put("DATABASE_URL", "jdbc:postgresql://127.0.0.1:" + FreePorts.next() + "/fleetmq");
        env.put("DATABASE_CONNECT_TIMEOUT", "2s");
        try (BrokerProcess p = BrokerProcess.start(workDir, env, "node")) {
            assertEquals(1, p.awaitExit(EXIT));
            assertTrue(oneLine(p).contains("database.url (DATABASE_URL)"), p.stderr());
        }
    }

    @Test
    void nodeModeRefusesToStartWithoutExternalDependencies() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("BROKER_DATA_DIR", workDir.resolve("data").toString());
        try (BrokerProcess p = BrokerProcess.start(workDir, env, "node")) {
            assertEquals(2, p.awaitExit(EXIT));
            String err = oneLine(p);
            assertEquals("fleetmq: configuration error: node mode needs an external Kafka: set "
                    + "kafka.bootstrap-servers (KAFKA_BOOTSTRAP_SERVERS)", err);
        }
    }

    @Test
    void unknownCommand() throws Exception {
        try (BrokerProcess p = BrokerProcess.start(workDir, Map.of(), "cluster")) {
            assertEquals(2, p.awaitExit(EXIT));
            assertTrue(oneLine(p).contains("unknown command 'cluster'"), p.stderr());
        }
    }
}
