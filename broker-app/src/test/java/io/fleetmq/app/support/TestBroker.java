package io.fleetmq.app.support;

import io.fleetmq.app.BrokerNode;
import io.fleetmq.app.Launcher;
import io.fleetmq.testkit.TestServices;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * A broker node in this JVM on the test kit's shared Kafka, Redis and PostgreSQL, with its own
 * topic prefix so tests do not see each other's messages, and free ports.
 */
public final class TestBroker implements AutoCloseable {

    private final BrokerNode node;

    private TestBroker(BrokerNode node) {
        this.node = node;
    }

    public static TestBroker start(Path dataDir, Map<String, String> extraEnv) {
        TestServices s = TestServices.shared();
        Map<String, String> env = new HashMap<>();
        env.put("BROKER_DATA_DIR", dataDir.toString());
        env.put("BROKER_NODE_ID", "test-node");
        env.put("BIND_ADDRESS", "127.0.0.1");
        env.put("MQTT_TCP_PORT", "0");
        env.put("MQTT_WS_PORT", "0");
        env.put("HTTP_PORT", "0");
        env.put("KAFKA_BOOTSTRAP_SERVERS", s.kafkaBootstrapServers());
        env.put("KAFKA_TOPIC_PREFIX", "t" + UUID.randomUUID().toString().substring(0, 8) + ".");
        env.put("KAFKA_PUBLISH_PARTITIONS", "4");
        env.put("REDIS_URL", s.redisUrl());
        env.put("DATABASE_URL", s.databaseUrl());
        env.put("DATABASE_USER", s.databaseUser());
        env.put("DATABASE_PASSWORD", s.databasePassword());
        env.putAll(extraEnv);
        return new TestBroker((BrokerNode) new Launcher(env::get, new PrintStream(new ByteArrayOutputStream()))
                .run("node"));
    }

    public BrokerNode node() {
        return node;
    }

    public int mqttPort() {
        return node.mqttPort("TCP");
    }

    @Override
    public void close() {
        node.close();
    }
}
