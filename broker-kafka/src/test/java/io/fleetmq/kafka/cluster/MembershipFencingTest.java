package io.fleetmq.kafka.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.NodeStatus;
import io.fleetmq.embedded.EmbeddedKafkaServer;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.kafka.TopicLayout;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TcpProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Self-fencing against a real Kafka: a node cut off from Kafka stops serving before any other node
 * may declare it dead, and a node whose own view is stale declares nobody dead. One node reaches
 * Kafka through a {@link TcpProxy} (on a listener of its own, so every connection of its clients
 * goes through the proxy) that the test partitions.
 */
class MembershipFencingTest {

    private static final Duration HEARTBEAT = Duration.ofMillis(200);
    private static final Duration TIMEOUT = Duration.ofSeconds(3);

    @TempDir
    static Path dir;

    private static EmbeddedKafkaServer kafka;
    private static TcpProxy proxy;

    private final List<AutoCloseable> closing = new ArrayList<>();
    private String prefix;

    @BeforeAll
    static void startKafka() throws Exception {
        int proxiedPort = FreePorts.next();
        proxy = TcpProxy.start("127.0.0.1", proxiedPort);
        kafka = new EmbeddedKafkaServer(dir, "127.0.0.1", 0, 0).withListener("PROXIED", proxiedPort, proxy.address());
        kafka.start();
    }

    @AfterAll
    static void stopKafka() {
        if (proxy != null) {
            proxy.close();
        }
        if (kafka != null) {
            kafka.stop();
        }
    }

    @AfterEach
    void close() throws Exception {
        proxy.heal();
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private KafkaSettings settings(String bootstrap) {
        return new KafkaSettings(bootstrap, prefix, 1, 1, 1, (short) 1, Duration.ofSeconds(2));
    }

    /** A node's membership, reaching Kafka directly or through the proxy. */
    private Membership node(String id, boolean throughProxy) {
        KafkaClients clients = new KafkaClients(settings(throughProxy ? proxy.address() : kafka.bootstrapServers()), id);
        Admin admin = clients.admin();
        closing.add(admin);
        Membership m = new Membership(clients, admin,
                new ClusterSettings(id, HEARTBEAT, TIMEOUT, 1, Duration.ofSeconds(5), null), System::currentTimeMillis);
        closing.add(m);
        return m;
    }

    private void layout() {
        prefix = "f" + System.nanoTime() + ".";
        KafkaSettings s = settings(kafka.bootstrapServers());
        try (Admin admin = new KafkaClients(s, "setup").admin()) {
            new TopicLayout(admin, s, new BrokerTopics(prefix)).ensure();
        }
    }

    @Test
    void aNodeCutOffFromKafkaFencesItselfBeforeAnyoneDeclaresItDead() {
        layout();
        Membership a = node("a", false);
        Membership b = node("b", true);
        AtomicLong bFencedAt = new AtomicLong();
        AtomicLong bDeclaredDeadAt = new AtomicLong();
        List<NodeStatus> deaths = new CopyOnWriteArrayList<>();
        b.onFenced(() -> bFencedAt.set(System.nanoTime()));
        a.onDeath(s -> {
            deaths.add(s);
            bDeclaredDeadAt.compareAndSet(0, System.nanoTime());
        });
        a.start(Duration.ofSeconds(30));
        b.start(Duration.ofSeconds(30));
        Await.until(Duration.ofSeconds(10), "a to see b", () -> a.liveNodes().contains("b"));
        assertTrue(b.serving());
        assertFalse(a.isGone("b", b.incarnation()));
        assertFalse(a.isGone("c", 1), "a node not heard of yet is not gone");

        proxy.partition();

        Await.until(Duration.ofSeconds(10), "b to fence itself", () -> bFencedAt.get() != 0);
        assertFalse(b.serving(), "a fenced node never serves again");
        assertTrue(b.fenced());
        assertTrue(a.isAlive("b", b.incarnation()), "b fenced itself while a still counted it alive");
        assertTrue(deaths.isEmpty(), "nobody declared b dead before it fenced");

        Await.until(Duration.ofSeconds(15), "a to declare b dead", () -> bDeclaredDeadAt.get() != 0);
        assertEquals("b", deaths.get(0).nodeId());
        assertEquals(b.incarnation(), deaths.get(0).incarnation());
        assertTrue(bDeclaredDeadAt.get() - bFencedAt.get() > 0, "declared dead only after it fenced");
        assertTrue(a.serving(), "the node that kept Kafka serves on");
        assertTrue(a.isGone("b", b.incarnation()), "a dead incarnation is gone");

        proxy.heal();
        assertFalse(b.serving(), "a fenced incarnation stays fenced after Kafka returns");

        Membership again = node("b", false); // b rejoins as a new incarnation
        again.start(Duration.ofSeconds(30));
        Await.until(Duration.ofSeconds(10), "a to see b's new incarnation",
                () -> a.isAlive("b", again.incarnation()));
        assertFalse(a.isGone("b", again.incarnation()));
        assertTrue(a.isGone("b", b.incarnation()), "replaced");
        assertTrue(again.isGone("b", b.incarnation()), "an earlier incarnation of the node itself is gone to it");
    }

    @Test
    void aNodeWhoseOwnViewIsStaleDeclaresNobodyDead() {
        layout();
        Membership a = node("a", false);
        Membership b = node("b", true);
        List<NodeStatus> deathsSeenByB = new CopyOnWriteArrayList<>();
        b.onDeath(deathsSeenByB::add);
        a.start(Duration.ofSeconds(30));
        b.start(Duration.ofSeconds(30));
        Await.until(Duration.ofSeconds(10), "b to see a", () -> b.liveNodes().contains("a"));

        proxy.partition();
        Await.until(Duration.ofSeconds(10), "b to fence itself", b::fenced);
        // Twice the node timeout without reading anything: a stale view must not turn into a verdict.
        long until = System.nanoTime() + TIMEOUT.multipliedBy(2).toNanos();
        Await.until(TIMEOUT.multipliedBy(3), "twice the node timeout to pass", () -> System.nanoTime() - until > 0);
        assertTrue(b.isAlive("a"), "b still counts a alive: it cannot know otherwise");
        assertFalse(b.isGone("a", a.incarnation()), "nor gone");
        assertTrue(deathsSeenByB.isEmpty(), "b declared nobody dead");
        assertNotNull(b.fenceReason());
        assertTrue(a.serving());
    }
}
