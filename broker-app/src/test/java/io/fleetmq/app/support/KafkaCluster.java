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
 * A Kafka cluster of several real Kafka processes (KRaft, each node broker and controller), for
 * tests that kill a Kafka broker the way a machine dies: {@code kill -9}. Topics are replicated to
 * every node by default with {@code min.insync.replicas} 2, as production clusters run.
 */
public final class KafkaCluster implements AutoCloseable {

    private final List<Process> processes = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    private final Path dir;

    private KafkaCluster(Path dir) {
        this.dir = dir;
    }

    public static KafkaCluster start(Path dir, int size) throws Exception {
        KafkaCluster cluster = new KafkaCluster(dir);
        try {
            cluster.launch(size);
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private void launch(int size) throws Exception {
        List<Integer> controllers = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ports.add(FreePorts.next());
            controllers.add(FreePorts.next());
        }
        String voters = java.util.stream.IntStream.range(0, size)
                .mapToObj(i -> (i + 1) + "@127.0.0.1:" + controllers.get(i)).collect(Collectors.joining(","));
        String clusterId = Uuid.randomUuid().toString();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        for (int i = 0; i < size; i++) {
            int id = i + 1;
            Path home = Files.createDirectories(dir.resolve("kafka-" + id));
            Properties p = new Properties();
            p.put("process.roles", "broker,controller");
            p.put("node.id", Integer.toString(id));
            p.put("controller.quorum.voters", voters);
            p.put("controller.listener.names", "CONTROLLER");
            p.put("listeners", "PLAINTEXT://127.0.0.1:" + ports.get(i) + ",CONTROLLER://127.0.0.1:" + controllers.get(i));
            p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + ports.get(i));
            p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            p.put("inter.broker.listener.name", "PLAINTEXT");
            p.put("log.dirs", home.resolve("logs").toString());
            p.put("default.replication.factor", Integer.toString(size));
            p.put("min.insync.replicas", "2");
            p.put("unclean.leader.election.enable", "false");
            p.put("offsets.topic.replication.factor", Integer.toString(size));
            p.put("offsets.topic.num.partitions", "5");
            p.put("transaction.state.log.replication.factor", Integer.toString(size));
            p.put("transaction.state.log.min.isr", "2");
            p.put("transaction.state.log.num.partitions", "5");
            p.put("share.coordinator.state.topic.replication.factor", Integer.toString(size));
            p.put("share.coordinator.state.topic.min.isr", "2");
            p.put("group.min.session.timeout.ms", "1000");
            p.put("group.initial.rebalance.delay.ms", "0");
            p.put("log.cleaner.dedupe.buffer.size", Integer.toString(8 * 1024 * 1024));
            p.put("num.network.threads", "2");
            p.put("num.io.threads", "2");
            p.put("background.threads", "2");
            // A killed broker is fenced, and its partitions get new leaders, within a few seconds.
            p.put("broker.heartbeat.interval.ms", "500");
            p.put("broker.session.timeout.ms", "3000");
            Path config = home.resolve("server.properties");
            try (OutputStream out = Files.newOutputStream(config)) {
                p.store(out, "test Kafka node " + id);
            }
            format(clusterId, config);
            Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx384m", "-cp", classpath, "kafka.Kafka", config.toString())
                    .redirectOutput(home.resolve("stdout.log").toFile())
                    .redirectError(home.resolve("stderr.log").toFile())
                    .start();
            processes.add(process);
        }
        try (Admin admin = admin()) {
            Await.until(Duration.ofMinutes(2), "all " + size + " Kafka brokers to serve", () -> {
                try {
                    return admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() == size;
                } catch (Exception e) {
                    return false;
                }
            });
        }
    }

    private static void format(String clusterId, Path config) {
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

    public String bootstrapServers() {
        return ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    }

    public Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000));
    }

    /** The node id of the leader of {@code topic}'s partition {@code partition}. */
    public int leaderOf(String topic, int partition) throws Exception {
        try (Admin admin = admin()) {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic)
                    .partitions().get(partition).leader().id();
        }
    }

    /** {@code kill -9} of the Kafka node with this id. */
    public void kill(int nodeId) throws InterruptedException {
        Process p = processes.get(nodeId - 1);
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws IOException {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (Process p : processes) {
            try {
                p.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
