package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.PairLoad;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.embedded.EmbeddedKafkaServer;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * One node's link to Kafka cut while its clients stay connected to it: it fences itself (clients
 * sent elsewhere with 0x9C) before the others declare it dead and settle its sessions, no will of a
 * client that stayed connected is published, nothing acknowledged is lost, and once the link
 * returns the node serves again as a new incarnation.
 */
class KafkaLinkCutIT {

    private static final Duration WAIT = Duration.ofMinutes(2);
    private static final Pattern LOG_TIME = Pattern.compile("^(\\S+) .*", Pattern.MULTILINE);

    // Kept when the test fails: the nodes' logs are the first thing to read.
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path workDir;

    private EmbeddedKafkaServer kafka;
    private TcpProxy proxy;
    private TestCluster cluster;
    private PairLoad load;
    private Mqtt5BlockingClient bystander;
    private Mqtt5BlockingClient watcher;

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.heal();
        }
        if (load != null) {
            load.close();
        }
        for (Mqtt5BlockingClient c : new Mqtt5BlockingClient[] {bystander, watcher}) {
            if (c != null && c.getState().isConnected()) {
                c.disconnect();
            }
        }
        if (cluster != null) {
            cluster.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (kafka != null) {
            kafka.stop();
        }
    }

    @Test
    void aNodeCutOffFromKafkaFencesItselfBeforeOthersSettleItsSessionsAndServesAgainAfterwards() throws Exception {
        // A Kafka of this test's own, with a listener that node 3 reaches only through the proxy.
        int proxied = FreePorts.next();
        proxy = TcpProxy.start("127.0.0.1", proxied);
        kafka = new EmbeddedKafkaServer(workDir.resolve("kafka"), "127.0.0.1", 0, 0)
                .withListener("NODE3", proxied, proxy.address());
        kafka.start();

        cluster = TestCluster.start(workDir, 2, Map.of(
                "KAFKA_BOOTSTRAP_SERVERS", kafka.bootstrapServers(),
                "KAFKA_REQUEST_TIMEOUT", "5s",
                "CLUSTER_HEARTBEAT_INTERVAL", "500ms",
                "CLUSTER_NODE_TIMEOUT", "6s"));
        cluster.add(Map.of("KAFKA_BOOTSTRAP_SERVERS", proxy.address()));

        // A client with a will due at once on node 1, and one watching for wills on node 2: both stay
        // connected throughout, so neither will may ever appear.
        List<String> wills = new CopyOnWriteArrayList<>();
        watcher = Mqtt5Client.builder().identifier("cut-watcher").serverHost("127.0.0.1").serverPort(cluster.port(2))
                .buildBlocking();
        watcher.connect();
        watcher.toAsync().publishes(MqttGlobalPublishFilter.ALL, p -> wills.add(p.getTopic().toString()));
        watcher.subscribeWith().topicFilter("cut/wills/#").qos(MqttQos.AT_LEAST_ONCE).send();
        bystander = Mqtt5Client.builder().identifier("cut-bystander").serverHost("127.0.0.1")
                .serverPort(cluster.port(1)).buildBlocking();
        bystander.connectWith().willPublish().topic("cut/wills/bystander").qos(MqttQos.AT_LEAST_ONCE)
                .payload("gone".getBytes(StandardCharsets.UTF_8)).applyWillPublish().send();

        load = new PairLoad("cut", 6, 3, cluster::port).connect(WAIT);
        load.start(Duration.ofMillis(20));
        long before = load.acknowledgedCount();
        Await.until(WAIT, "load before the cut", () -> load.acknowledgedCount() >= before + 300);

        proxy.partition();
        long cut = System.nanoTime();
        Await.until(WAIT, "node 3's clients to be told to use another server",
                () -> load.lastToldToMoveNanos() - cut > 0);
        System.out.println("[KafkaLinkCutIT] node 3's clients told to use another server (0x9C) "
                + (load.lastToldToMoveNanos() - cut) / 1_000_000 + " ms after its link was cut");
        Await.until(WAIT, "node 3 to report not ready", () -> !Http.isReady(cluster.node(3).httpPort()));
        // Node 3 sends its clients elsewhere; the others declare it dead later, a node timeout after
        // its last heartbeat they read.
        Await.until(WAIT, "node 1 to declare node 3 dead",
                () -> cluster.node(1).process().stdout().contains("Node node-3 (incarnation"));
        assertFalse(Http.isReady(cluster.node(3).httpPort()), "a fenced node is not ready");
        long during = load.acknowledgedCount();
        Await.until(WAIT, "load to go on without node 3", () -> load.acknowledgedCount() >= during + 300);

        proxy.heal();
        long healed = System.nanoTime();
        Await.until(WAIT, "node 3 ready again", () -> Http.isReady(cluster.node(3).httpPort()));
        System.out.println("[KafkaLinkCutIT] node 3 ready again " + (System.nanoTime() - healed) / 1_000_000
                + " ms after its link returned");
        assertTrue(cluster.node(3).process().stdout().contains("Node rejoined the cluster as incarnation"),
                "node 3 came back as a new incarnation");
        load.awaitDeliveryAfterNow(WAIT);
        load.stop(WAIT);

        String fenced = line(cluster.node(3).process().stdout(), "fences itself");
        String dead = line(cluster.node(1).process().stdout(), "Node node-3 (incarnation");
        assertNotNull(fenced, "node 3 logged that it fenced itself");
        assertTrue(time(fenced).isBefore(time(dead)), "node 3 fenced itself (" + time(fenced)
                + ") before node 1 declared it dead (" + time(dead) + ")");

        List<List<Long>> missing = load.awaitAllAcknowledgedDelivered(WAIT);
        for (int i = 0; i < missing.size(); i++) {
            assertEquals(List.of(), missing.get(i), "acknowledged messages of pair " + i + " never delivered");
        }
        assertTrue(load.toldToUseAnotherServer() > 0, "node 3 sent its clients elsewhere (0x9C): "
                + load.disconnectReasons());
        assertTrue(load.clientsThatMoved() > 0, "node 3's clients resumed on other nodes");
        assertEquals(Map.of(), load.wills(), "no will of a client that came back in time");
        assertEquals(List.of(), wills, "no will of a client that stayed connected");

        // A client connecting to node 3 now is served, with traffic to and from the other nodes.
        Mqtt5BlockingClient fresh = Mqtt5Client.builder().identifier("cut-fresh").serverHost("127.0.0.1")
                .serverPort(cluster.port(3)).buildBlocking();
        fresh.connect();
        List<String> got = new CopyOnWriteArrayList<>();
        fresh.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> got.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
        fresh.subscribeWith().topicFilter("cut/after").qos(MqttQos.AT_LEAST_ONCE).send();
        Await.until(WAIT, "node 3 to deliver what node 1 stores", () -> {
            bystander.publishWith().topic("cut/after").qos(MqttQos.AT_LEAST_ONCE)
                    .payload("back".getBytes(StandardCharsets.UTF_8)).send();
            return got.contains("back");
        });
        fresh.disconnect();
    }

    private static String line(String log, String containing) {
        for (String l : log.split("\n")) {
            if (l.contains(containing)) {
                return l;
            }
        }
        return null;
    }

    private static OffsetDateTime time(String logLine) {
        Matcher m = LOG_TIME.matcher(logLine);
        if (!m.find()) {
            throw new AssertionError("no time in " + logLine);
        }
        return OffsetDateTime.parse(m.group(1));
    }
}
