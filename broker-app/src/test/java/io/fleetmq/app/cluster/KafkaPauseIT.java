package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import io.fleetmq.app.support.BrokerProcess;
import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.PairLoad;
import io.fleetmq.app.support.Persisted;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TestServices;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole cluster's Kafka paused (SIGSTOP) for 2, 12 and 30 s under QoS 1 load across three
 * nodes. A pause well inside the fencing margin disturbs no client; a longer one makes every node
 * fence itself (clients told to use another server, CONNECTs refused with 0x88) and rejoin once
 * Kafka is back. Either way nothing acknowledged is lost, delivery resumes, and no will is
 * published for a client that comes back within its will delay.
 */
class KafkaPauseIT {

    private static final Duration WAIT = Duration.ofMinutes(2);

    // Kept when the test fails: the nodes' logs are the first thing to read.
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path workDir;

    private BrokerProcess kafka;
    private TestCluster cluster;
    private PairLoad load;

    @AfterEach
    void stop() throws Exception {
        if (kafka != null) {
            signal("CONT", kafka.pid());
        }
        if (load != null) {
            load.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (kafka != null) {
            kafka.close();
        }
    }

    @Test
    void pausingKafkaLosesNothingAcknowledgedAndFencedNodesComeBack() throws Exception {
        // Kafka alone in a process of its own, so that only Kafka stops.
        TestServices shared = TestServices.shared();
        Map<String, String> kafkaEnv = new HashMap<>();
        kafkaEnv.put("BROKER_DATA_DIR", workDir.resolve("kafka-data").toString());
        kafkaEnv.put("EMBEDDED_KAFKA_PORT", String.valueOf(FreePorts.next()));
        kafkaEnv.put("EMBEDDED_KAFKA_CONTROLLER_PORT", String.valueOf(FreePorts.next()));
        kafkaEnv.put("REDIS_URL", shared.redisUrl());
        kafkaEnv.put("DATABASE_URL", shared.databaseUrl());
        kafkaEnv.put("DATABASE_USER", shared.databaseUser());
        kafkaEnv.put("DATABASE_PASSWORD", shared.databasePassword());
        kafka = BrokerProcess.start(workDir.resolve("kafka"), kafkaEnv, "services");
        kafka.awaitOutput("KAFKA_BOOTSTRAP_SERVERS=", Duration.ofMinutes(2));
        String bootstrap = Persisted.parseEnvLines(kafka.stdout()).get("KAFKA_BOOTSTRAP_SERVERS");

        // The shipped node timeout (6 s): a node fences itself after 4 s without a confirmed heartbeat.
        cluster = TestCluster.start(workDir, 3, Map.of(
                "KAFKA_BOOTSTRAP_SERVERS", bootstrap,
                "CLUSTER_HEARTBEAT_INTERVAL", "500ms",
                "CLUSTER_NODE_TIMEOUT", "6s"));
        load = new PairLoad("pause", 9, 3, cluster::port).connect(WAIT);
        load.start(Duration.ofMillis(20));
        awaitMoreAcknowledged(500);

        // 2 s: well inside the fencing margin. A node fences 4 s after sending its last confirmed
        // heartbeat; that one may be up to an interval (0.5 s) old when Kafka stops, and after
        // Kafka resumes the next one still has to be stored. 2 s leaves Kafka about 1.5 s for that;
        // 3 s left under 1 s, which a just-resumed Kafka on busy cores does not always manage.
        pause(Duration.ofSeconds(2), false);
        long resumed = System.nanoTime();
        load.awaitDeliveryAfterNow(WAIT);
        report("2 s pause: delivery again " + millisSince(resumed) + " ms after Kafka resumed");
        assertEquals(0, load.disconnects(), "no client lost its connection in a 2 s pause: "
                + load.disconnectReasons());
        assertEquals(0, fences(), "no node fenced itself in a 2 s pause");
        awaitMoreAcknowledged(500);

        // 12 s and 30 s: longer than the node timeout. Every node fences itself and rejoins.
        for (int seconds : new int[] {12, 30}) {
            int fencesBefore = fences();
            pause(Duration.ofSeconds(seconds), true);
            long back = System.nanoTime();
            for (int n = 1; n <= 3; n++) {
                int node = n;
                Await.until(WAIT, "node " + n + " ready again", () -> Http.isReady(cluster.node(node).httpPort()));
            }
            long ready = millisSince(back);
            load.awaitDeliveryAfterNow(WAIT);
            report(seconds + " s pause: every node ready " + ready + " ms and every pair delivering "
                    + millisSince(back) + " ms after Kafka resumed");
            assertTrue(fences() >= fencesBefore + 3, "every node fenced itself in a " + seconds + " s pause");
            awaitMoreAcknowledged(500);
        }

        load.stop(WAIT);
        List<List<Long>> missing = load.awaitAllAcknowledgedDelivered(WAIT);
        String drops = drops();
        for (int i = 0; i < missing.size(); i++) {
            assertEquals(List.of(), missing.get(i), "acknowledged messages of pair " + i + " never delivered; "
                    + "drops counted: " + drops + "; logs kept in " + workDir);
        }
        assertTrue(load.toldToUseAnotherServer() > 0, "fenced nodes sent their clients elsewhere (0x9C): "
                + load.disconnectReasons());
        assertTrue(load.clientsThatMoved() > 0, "clients of fenced nodes resumed on other nodes");
        assertEquals(Map.of(), load.wills(), "no will published: every client came back within its will delay");
        for (int n = 1; n <= 3; n++) {
            assertTrue(Http.isReady(cluster.node(n).httpPort()), "node " + n + " serves again");
        }
    }

    /** Every node's dropped-message counters, for the failure message. */
    private String drops() {
        StringBuilder all = new StringBuilder();
        for (int n = 1; n <= 3; n++) {
            for (String line : Http.get(cluster.node(n).httpPort(), "/metrics").body().split("\n")) {
                if (line.startsWith("fleetmq_messages_dropped_total")) {
                    all.append(line).append("; ");
                }
            }
        }
        return all.toString();
    }

    private void awaitMoreAcknowledged(long more) {
        long target = load.acknowledgedCount() + more;
        Await.until(WAIT, more + " more acknowledged messages", () -> load.acknowledgedCount() >= target);
    }

    /** Fences counted by all nodes (each node counts its own). */
    private int fences() {
        int sum = 0;
        Pattern p = Pattern.compile("^fleetmq_cluster_fences_total\\{[^}]*\\} ([0-9.]+)$", Pattern.MULTILINE);
        for (int n = 1; n <= 3; n++) {
            var response = Http.get(cluster.node(n).httpPort(), "/metrics");
            Matcher m = p.matcher(response.body());
            if (m.find()) {
                sum += (int) Double.parseDouble(m.group(1));
            }
        }
        return sum;
    }

    /**
     * Stops Kafka for {@code d}. With {@code fencing}, also checks what a client meets while the
     * nodes are fenced: not ready, and a new CONNECT refused with 0x88 Server unavailable.
     */
    private void pause(Duration d, boolean fencing) throws Exception {
        long start = System.nanoTime();
        signal("STOP", kafka.pid());
        try {
            if (fencing) {
                Await.until(d, "clients to be told to use another server", () -> load.lastToldToMoveNanos() - start > 0);
                report("clients told to use another server (0x9C) " + (load.lastToldToMoveNanos() - start) / 1_000_000
                        + " ms into the pause");
                Await.until(d, "node 1 to fence itself", () -> !Http.isReady(cluster.node(1).httpPort()));
                Mqtt5BlockingClient probe = Mqtt5Client.builder().identifier("pause-probe").serverHost("127.0.0.1")
                        .serverPort(cluster.port(1)).buildBlocking();
                Mqtt5ConnAckException refused = assertThrows(Mqtt5ConnAckException.class, probe::connect);
                assertEquals(Mqtt5ConnAckReasonCode.SERVER_UNAVAILABLE, refused.getMqttMessage().getReasonCode(),
                        "a fenced node refuses CONNECT with 0x88");
            }
            long left = d.toNanos() - (System.nanoTime() - start);
            Thread.sleep(Math.max(0, left / 1_000_000)); // the outage itself is the scenario
        } finally {
            signal("CONT", kafka.pid());
        }
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    private static void report(String line) {
        System.out.println("[KafkaPauseIT] " + line); // measured durations, for docs/cluster.md
    }

    private static void signal(String signal, long pid) throws Exception {
        Process p = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
        }
    }
}
