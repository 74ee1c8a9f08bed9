package io.fleetmq.app.support;

import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * A Kafka cluster of several KRaft nodes (each broker and controller), every node a JVM of its own
 * so a test can kill one with SIGKILL, as a machine failure would. Replicated for real: internal
 * topics with three replicas and {@code min.insync.replicas=2}, so losing one node loses nothing
 * acknowledged with {@code acks=all}.
 */
public final class KafkaBrokerCluster implements AutoCloseable {

    private final Path workDir;
    private final List<Integer> ports = new ArrayList<>();
    private final List<Integer> controllerPorts = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();

    private KafkaBrokerCluster(Path workDir) {
        this.workDir = workDir;
    }

    /** Formats and starts {@code size} nodes (ids 1..size) and waits until all are brokers of the cluster. */
    public static KafkaBrokerCluster start(Path workDir, int size) throws Exception {
        KafkaBrokerCluster cluster = new KafkaBrokerCluster(workDir);
        try {
            cluster.launch(size);
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private void launch(int size) throws Exception {
        for (int i = 0; i < size; i++) {
            ports.add(FreePorts.next());
            controllerPorts.add(FreePorts.next());
        }
        String voters = java.util.stream.IntStream.range(0, size)
                .mapToObj(i -> (i + 1) + "@127.0.0.1:" + controllerPorts.get(i)).collect(Collectors.joining(","));
        String clusterId = Uuid.randomUuid().toString();
        for (int i = 0; i < size; i++) {
            Path dir = workDir.resolve("kafka-" + (i + 1));
            Files.createDirectories(dir);
            Path config = dir.resolve("server.properties");
            try (OutputStream out = Files.newOutputStream(config)) {
                properties(i + 1, voters, dir.resolve("logs"), size).store(out, "test Kafka node " + (i + 1));
            }
            format(config, clusterId);
            processes.add(new ProcessBuilder(javaBinary(), "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), "kafka.Kafka", config.toString())
                    .directory(dir.toFile())
                    .redirectOutput(dir.resolve("stdout.log").toFile())
                    .redirectError(dir.resolve("stderr.log").toFile())
                    .start());
        }
        try (Admin admin = admin()) {
            Await.until(Duration.ofMinutes(3), size + " Kafka brokers in the cluster", () -> {
                for (Process p : processes) {
                    if (!p.isAlive()) {
                        throw new IllegalStateException("a Kafka node exited with " + p.exitValue() + "; see " + workDir);
                    }
                }
                try {
                    return admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() == size;
                } catch (Exception e) {
                    return false;
                }
            });
        }
    }

    private Properties properties(int nodeId, String voters, Path logDir, int size) {
        int port = ports.get(nodeId - 1);
        int controllerPort = controllerPorts.get(nodeId - 1);
        int replicas = Math.min(3, size);
        String minIsr = Integer.toString(Math.max(1, replicas - 1));
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", Integer.toString(nodeId));
        p.put("controller.quorum.voters", voters);
        p.put("controller.listener.names", "CONTROLLER");
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("log.dirs", logDir.toString());
        // Replicated as in production: a write acknowledged with acks=all is on two nodes at least.
        p.put("default.replication.factor", Integer.toString(replicas));
        p.put("min.insync.replicas", minIsr);
        p.put("offsets.topic.replication.factor", Integer.toString(replicas));
        p.put("transaction.state.log.replication.factor", Integer.toString(replicas));
        p.put("transaction.state.log.min.isr", minIsr);
        p.put("share.coordinator.state.topic.replication.factor", Integer.toString(replicas));
        p.put("share.coordinator.state.topic.min.isr", minIsr);
        p.put("unclean.leader.election.enable", "false");
        // Small and quick, for a machine that runs the whole cluster and the broker nodes at once.
        p.put("offsets.topic.num.partitions", "5");
        p.put("transaction.state.log.num.partitions", "5");
        p.put("share.coordinator.state.topic.num.partitions", "5");
        p.put("group.min.session.timeout.ms", "1000");
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("log.cleaner.dedupe.buffer.size", Integer.toString(8 * 1024 * 1024));
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "2");
        p.put("num.replica.fetchers", "1");
        p.put("background.threads", "2");
        p.put("broker.heartbeat.interval.ms", "500");
        // A killed node's partitions get new leaders once the controller gives up on it.
        p.put("broker.session.timeout.ms", "3000");
        return p;
    }

    private static void format(Path config, String clusterId) {
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        int exit;
        try (PrintStream print = new PrintStream(output, true, StandardCharsets.UTF_8)) {
            exit = StorageTool.execute(new String[] {"format", "--cluster-id", clusterId, "--config", config.toString()},
                    print);
        }
        if (exit != 0) {
            throw new IllegalStateException("formatting " + config + " failed: " + output.toString(StandardCharsets.UTF_8));
        }
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** All nodes, for clients: {@code 127.0.0.1:p1,127.0.0.1:p2,...}. */
    public String bootstrapServers() {
        return ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    }

    public Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000",
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000"));
    }

    /** kill -9 of node {@code nodeId}; returns once the process is gone. */
    public void kill(int nodeId) throws InterruptedException {
        Process p = processes.get(nodeId - 1);
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    public boolean isAlive(int nodeId) {
        return processes.get(nodeId - 1).isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
