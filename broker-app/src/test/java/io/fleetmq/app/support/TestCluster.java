package io.fleetmq.app.support;

import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TestServices;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Several broker nodes, each the real jar in its own JVM ({@code node} mode), on the test kit's
 * shared Kafka, Redis and PostgreSQL, under one topic prefix of their own: a cluster as operators
 * run it, on one machine.
 */
public final class TestCluster implements AutoCloseable {

    private final Path workDir;
    private final Map<String, String> env;
    private final List<Node> nodes = new ArrayList<>();

    /** One node: its process (replaced on restart) and its fixed ports. */
    public static final class Node {
        final String id;
        final int mqttPort;
        final int httpPort;
        final Map<String, String> env;
        BrokerProcess process;
        int runs;

        Node(String id, int mqttPort, int httpPort, Map<String, String> env) {
            this.id = id;
            this.mqttPort = mqttPort;
            this.httpPort = httpPort;
            this.env = env;
        }

        public String id() {
            return id;
        }

        public int mqttPort() {
            return mqttPort;
        }

        public int httpPort() {
            return httpPort;
        }

        public BrokerProcess process() {
            return process;
        }
    }

    private TestCluster(Path workDir, Map<String, String> env) {
        this.workDir = workDir;
        this.env = env;
    }

    /** Starts {@code size} nodes named node-1.. at once and waits until each is ready. */
    public static TestCluster start(Path workDir, int size, Map<String, String> extraEnv) throws Exception {
        TestServices s = TestServices.shared();
        Map<String, String> env = new HashMap<>();
        env.put("KAFKA_BOOTSTRAP_SERVERS", s.kafkaBootstrapServers());
        env.put("KAFKA_TOPIC_PREFIX", "c" + UUID.randomUUID().toString().substring(0, 8) + ".");
        env.put("KAFKA_PUBLISH_PARTITIONS", "6");
        env.put("KAFKA_SESSION_EVENTS_PARTITIONS", "6");
        env.put("REDIS_URL", s.redisUrl());
        // As in TestBroker: the per-client publish rate has tests of its own.
        env.put("MQTT_MAX_PUBLISH_RATE", "0");
        env.put("MQTT_MAX_PUBLISH_BYTES_RATE", "0");
        env.put("DATABASE_URL", s.databaseUrl());
        env.put("DATABASE_USER", s.databaseUser());
        env.put("DATABASE_PASSWORD", s.databasePassword());
        env.put("MQTT_WS_ENABLED", "false");
        env.put("CLUSTER_HEARTBEAT_INTERVAL", "500ms");
        // The shipped timeout: a node fences itself after 4 s without a confirmed heartbeat, which a
        // loaded test machine must not reach by accident.
        env.put("CLUSTER_NODE_TIMEOUT", "6s");
        env.putAll(extraEnv);
        TestCluster cluster = new TestCluster(workDir, env);
        try {
            for (int i = 1; i <= size; i++) {
                Node node = new Node("node-" + i, FreePorts.next(), FreePorts.next(), Map.of());
                cluster.nodes.add(node);
                cluster.launch(node);
            }
            for (Node node : cluster.nodes) {
                cluster.awaitReady(node);
            }
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** The Kafka topic prefix of this cluster's topics and consumer groups. */
    public String topicPrefix() {
        return env.get("KAFKA_TOPIC_PREFIX");
    }

    /** Node {@code n}, counting from 1. */
    public Node node(int n) {
        return nodes.get(n - 1);
    }

    public int port(int n) {
        return node(n).mqttPort;
    }

    /**
     * Starts one more node, with settings of its own on top of the cluster's, and waits until it is
     * ready; nothing changes on the other nodes.
     *
     * @return its number
     */
    public int add(Map<String, String> extraEnv) throws Exception {
        Node node = new Node("node-" + (nodes.size() + 1), FreePorts.next(), FreePorts.next(), extraEnv);
        nodes.add(node);
        launch(node);
        awaitReady(node);
        return nodes.size();
    }

    /** A graceful stop (SIGTERM); returns the exit code. */
    public int stop(int n) throws InterruptedException {
        return node(n).process.terminate(Duration.ofMinutes(1));
    }

    /** kill -9. */
    public void kill(int n) throws InterruptedException {
        node(n).process.kill();
    }

    /** A graceful stop (SIGTERM) and a start on the same ports and data directory. */
    public void restart(int n) throws Exception {
        Node node = node(n);
        node.process.terminate(Duration.ofMinutes(1));
        launch(node);
        awaitReady(node);
    }

    private void launch(Node node) throws IOException {
        Map<String, String> nodeEnv = new HashMap<>(env);
        nodeEnv.put("BROKER_NODE_ID", node.id);
        nodeEnv.put("BROKER_DATA_DIR", workDir.resolve(node.id).resolve("data").toString());
        nodeEnv.put("MQTT_TCP_PORT", String.valueOf(node.mqttPort));
        nodeEnv.put("HTTP_PORT", String.valueOf(node.httpPort));
        nodeEnv.putAll(node.env);
        node.runs++;
        node.process = BrokerProcess.start(workDir.resolve(node.id).resolve("run-" + node.runs), nodeEnv, "node");
    }

    private void awaitReady(Node node) {
        node.process.awaitOutput("FleetMQ node " + node.id + " ready in ", Duration.ofMinutes(2));
    }

    @Override
    public void close() throws InterruptedException {
        for (Node node : nodes) {
            if (node.process != null) {
                node.process.close();
            }
        }
    }
}
