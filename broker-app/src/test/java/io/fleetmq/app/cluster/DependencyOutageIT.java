package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.Http;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.embedded.EmbeddedPostgresServer;
import io.fleetmq.embedded.EmbeddedRedisServer;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PostgreSQL stopped for two minutes, then Redis for one, under a 2-node cluster with its own
 * PostgreSQL and Redis: every node stays ready (200, the body says which dependency degrades it),
 * QoS 0/1 traffic between clean sessions across the nodes goes on throughout, and persistent
 * DEVICE delivery pauses while Redis is away and then resumes with every acknowledged QoS 1
 * message delivered, to the subscriber that stayed online and to the one that was offline.
 *
 * <p>The outage durations are the scenario; everything else waits on conditions. The test prints
 * how long DEVICE delivery took to resume after Redis came back (docs/operations.md quotes it).
 *
 * <p>Runs beside the other test classes (it has its own PostgreSQL and Redis, and spends its three
 * minutes mostly waiting out the outages).
 */
@org.junit.jupiter.api.parallel.Execution(org.junit.jupiter.api.parallel.ExecutionMode.CONCURRENT)
class DependencyOutageIT {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final Duration POSTGRES_OUTAGE = Duration.ofMinutes(2);
    private static final Duration REDIS_OUTAGE = Duration.ofMinutes(1);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path workDir;

    private static EmbeddedRedisServer redis;
    private static EmbeddedPostgresServer postgres;
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        redis = new EmbeddedRedisServer(workDir.resolve("redis"), "127.0.0.1", FreePorts.next());
        redis.start();
        postgres = new EmbeddedPostgresServer(workDir.resolve("postgres"), "127.0.0.1", FreePorts.next());
        postgres.start();
        cluster = TestCluster.start(workDir.resolve("nodes"), 2, Map.of(
                "REDIS_URL", redis.url(),
                "DATABASE_URL", postgres.jdbcUrl(),
                "DATABASE_USER", postgres.user(),
                "DATABASE_PASSWORD", postgres.password()));
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        if (redis != null) {
            redis.stop();
        }
        if (postgres != null) {
            postgres.stop();
        }
    }

    private static Mqtt5BlockingClient client(String id, int node) {
        return Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1").serverPort(cluster.port(node))
                .buildBlocking();
    }

    private static int number(byte[] payload) {
        return Integer.parseInt(new String(payload, StandardCharsets.UTF_8));
    }

    /** Publishes numbered QoS 1 messages in a loop and remembers which ones were acknowledged. */
    private static final class Publisher implements AutoCloseable {
        final Set<Integer> acked = new ConcurrentSkipListSet<>();
        final AtomicInteger failures = new AtomicInteger();
        final AtomicBoolean running = new AtomicBoolean(true);
        final Thread thread;

        Publisher(Mqtt5BlockingClient client, String topic, MqttQos qos) {
            thread = new Thread(() -> {
                int n = 0;
                while (running.get()) {
                    try {
                        client.publishWith().topic(topic).qos(qos)
                                .payload(Integer.toString(n).getBytes(StandardCharsets.UTF_8)).send();
                        acked.add(n);
                    } catch (RuntimeException e) {
                        failures.incrementAndGet();
                    }
                    n++;
                    try {
                        Thread.sleep(50); // a steady trickle; the load itself is not under test
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "publisher-" + topic);
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(30_000);
        }
    }

    @Test
    void postgresThenRedisAwayEveryNodeStaysReadyAndNothingAcknowledgedIsLost() throws Exception {
        // Persistent DEVICE subscribers: one stays online on node 1, one leaves and comes back at the end.
        Set<Integer> onlineGot = new ConcurrentSkipListSet<>();
        AtomicInteger onlineDeliveries = new AtomicInteger();
        AtomicLong onlineLastAt = new AtomicLong();
        Mqtt5BlockingClient online = client("dev-online", 1);
        online.toAsync().publishes(MqttGlobalPublishFilter.ALL, p -> {
            onlineGot.add(number(p.getPayloadAsBytes()));
            onlineDeliveries.incrementAndGet();
            onlineLastAt.set(System.nanoTime());
        });
        online.connectWith().cleanStart(true).sessionExpiryInterval(3600).send();
        online.subscribeWith().topicFilter("dev/all").qos(MqttQos.AT_LEAST_ONCE).send();
        Mqtt5BlockingClient offline = client("dev-offline", 2);
        offline.connectWith().cleanStart(true).sessionExpiryInterval(3600).send();
        offline.subscribeWith().topicFilter("dev/all").qos(MqttQos.AT_LEAST_ONCE).send();
        offline.disconnect();

        // Clean sessions across the nodes: subscriber on node 2, publishers on node 1.
        Set<Integer> liveGot = new ConcurrentSkipListSet<>();
        Set<Integer> live0Got = new ConcurrentSkipListSet<>();
        Mqtt5BlockingClient cleanSub = client("clean-sub", 2);
        cleanSub.toAsync().publishes(MqttGlobalPublishFilter.ALL, p -> {
            (p.getTopic().toString().equals("live/q1") ? liveGot : live0Got).add(number(p.getPayloadAsBytes()));
        });
        cleanSub.connectWith().cleanStart(true).send();
        cleanSub.subscribeWith().topicFilter("live/#").qos(MqttQos.AT_LEAST_ONCE).send();

        Await.until(WAIT, "subscriptions known on both nodes",
                () -> metric(1, "fleetmq_subscriptions") >= 3 && metric(2, "fleetmq_subscriptions") >= 3);

        Mqtt5BlockingClient livePub = client("clean-pub-1", 1);
        livePub.connectWith().cleanStart(true).send();
        Mqtt5BlockingClient live0Pub = client("clean-pub-0", 1);
        live0Pub.connectWith().cleanStart(true).send();
        Mqtt5BlockingClient devPub = client("clean-pub-dev", 2);
        devPub.connectWith().cleanStart(true).send();

        try (Publisher live = new Publisher(livePub, "live/q1", MqttQos.AT_LEAST_ONCE);
                Publisher live0 = new Publisher(live0Pub, "live/q0", MqttQos.AT_MOST_ONCE);
                Publisher dev = new Publisher(devPub, "dev/all", MqttQos.AT_LEAST_ONCE)) {
            Await.until(WAIT, "traffic flows before the outages",
                    () -> liveGot.size() > 10 && live0Got.size() > 10 && onlineGot.size() > 10);
            for (int n = 1; n <= 2; n++) {
                assertHealth(n, "UP", Set.of());
            }

            // ---- PostgreSQL away for two minutes.
            postgres.stop();
            for (int n = 1; n <= 2; n++) {
                int node = n;
                Await.until(WAIT, "node " + n + " reports postgres degraded", () -> degraded(node).contains("postgres"));
                Await.until(WAIT, "node " + n + " gauge postgres 0",
                        () -> metric(node, "fleetmq_dependency_up{dependency=\"postgres\"") == 0.0);
            }
            duringOutage(POSTGRES_OUTAGE, "postgres", liveGot, live0Got, () -> onlineGot.size());
            postgres.start();
            for (int n = 1; n <= 2; n++) {
                int node = n;
                Await.until(WAIT, "node " + n + " no longer degraded", () -> degraded(node).isEmpty());
            }

            // ---- Redis away for a minute.
            int devAckedBefore = dev.acked.size();
            redis.stop();
            for (int n = 1; n <= 2; n++) {
                int node = n;
                Await.until(WAIT, "node " + n + " reports redis degraded", () -> degraded(node).contains("redis"));
                Await.until(WAIT, "node " + n + " gauge redis 0",
                        () -> metric(node, "fleetmq_dependency_up{dependency=\"redis\"") == 0.0);
            }
            // Only the clean sessions' traffic must progress; DEVICE publishes are still acknowledged (stored in Kafka).
            duringOutage(REDIS_OUTAGE, "redis", liveGot, live0Got, () -> dev.acked.size());
            assertTrue(dev.acked.size() > devAckedBefore, "DEVICE-bound publishes acknowledged while Redis was away");
            Set<Integer> missingAtReturn = missing(dev.acked, onlineGot);

            long back = System.nanoTime();
            redis.start();
            // How long the online DEVICE waits after Redis is back: first the first message it
            // missed, then every message acknowledged up to Redis' return.
            int firstMissing = missingAtReturn.isEmpty() ? -1 : missingAtReturn.iterator().next();
            Await.until(WAIT, "the online DEVICE gets what it missed",
                    () -> firstMissing < 0 || onlineGot.contains(firstMissing));
            double firstSeconds = (System.nanoTime() - back) / 1e9;
            Await.until(WAIT, "the online DEVICE gets every message acknowledged during the outage",
                    () -> onlineGot.containsAll(missingAtReturn));
            double allSeconds = (System.nanoTime() - back) / 1e9;
            System.out.printf("DEVICE delivery after Redis returned: %d message(s) waiting; first delivered after %.1f s,"
                    + " all after %.1f s%n", missingAtReturn.size(), firstSeconds, allSeconds);
            for (int n = 1; n <= 2; n++) {
                int node = n;
                Await.until(WAIT, "node " + n + " no longer degraded", () -> degraded(node).isEmpty());
            }
            assertTrue(orZero(metric(1, "fleetmq_redis_errors_total")) + orZero(metric(2, "fleetmq_redis_errors_total")) > 0,
                    "failed Redis commands are counted");
            dev.close();
            live.close();
            live0.close();

            Set<Integer> devAcked = new TreeSet<>(dev.acked);
            Await.until(WAIT, "every acknowledged message reaches the online DEVICE",
                    () -> onlineGot.containsAll(devAcked));

            Set<Integer> offlineGot = new ConcurrentSkipListSet<>();
            Mqtt5BlockingClient back2 = client("dev-offline", 1);
            back2.toAsync().publishes(MqttGlobalPublishFilter.ALL, p -> offlineGot.add(number(p.getPayloadAsBytes())));
            assertTrue(back2.connectWith().cleanStart(false).sessionExpiryInterval(3600).send().isSessionPresent());
            Await.until(WAIT, "every acknowledged message reaches the DEVICE that was offline",
                    () -> offlineGot.containsAll(devAcked));
            back2.disconnectWith().sessionExpiryInterval(0).send();

            Set<Integer> liveAcked = new TreeSet<>(live.acked);
            Await.until(WAIT, "every acknowledged clean-session QoS 1 message arrives", () -> liveGot.containsAll(liveAcked));
            assertEquals(0, live.failures.get(), "no clean-session QoS 1 publish failed during the outages");
            assertEquals(0, dev.failures.get(), "no DEVICE-bound publish was refused during the outages");
            assertEquals(Set.of(), missing(devAcked, onlineGot));
            assertEquals(Set.of(), missing(devAcked, offlineGot));
        } finally {
            online.disconnectWith().sessionExpiryInterval(0).send();
        }
    }

    /**
     * Holds the outage for {@code length}; meanwhile, round after round, both nodes answer ready
     * with {@code dependency} degraded, clean-session QoS 0 and QoS 1 messages keep arriving
     * across the nodes, and a new clean session can connect and exchange a message.
     */
    private static void duringOutage(Duration length, String dependency, Set<Integer> liveGot, Set<Integer> live0Got,
            java.util.function.IntSupplier other) {
        long end = System.nanoTime() + length.toNanos();
        int round = 0;
        while (System.nanoTime() < end) {
            int liveBefore = liveGot.size();
            int live0Before = live0Got.size();
            for (int n = 1; n <= 2; n++) {
                assertHealth(n, "DEGRADED", Set.of(dependency));
            }
            Await.until(WAIT, "clean-session QoS 1 traffic goes on while " + dependency + " is away",
                    () -> liveGot.size() > liveBefore);
            Await.until(WAIT, "clean-session QoS 0 traffic goes on while " + dependency + " is away",
                    () -> live0Got.size() > live0Before);
            if (round++ % 10 == 0) {
                newCleanSessionExchangesAMessage(dependency + "-" + round);
            }
            sleepUpTo(end, Duration.ofSeconds(2));
        }
        System.out.printf("%s away for %s: %d rounds of checks, last count %d%n", dependency, length, round,
                other.getAsInt());
    }

    private static void newCleanSessionExchangesAMessage(String tag) {
        Set<String> got = new ConcurrentSkipListSet<>();
        Mqtt5BlockingClient sub = client("fresh-sub-" + tag, 1);
        sub.toAsync().publishes(MqttGlobalPublishFilter.ALL, p -> got.add(new String(p.getPayloadAsBytes(),
                StandardCharsets.UTF_8)));
        sub.connectWith().cleanStart(true).send();
        sub.subscribeWith().topicFilter("fresh/" + tag).qos(MqttQos.AT_LEAST_ONCE).send();
        Mqtt5BlockingClient pub = client("fresh-pub-" + tag, 2);
        pub.connectWith().cleanStart(true).send();
        // The subscription reaches the routing node a moment after SUBACK: publish until it arrives.
        Await.until(WAIT, "a new clean session gets a message (" + tag + ")", () -> {
            pub.publishWith().topic("fresh/" + tag).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(tag.getBytes(StandardCharsets.UTF_8)).send();
            return got.contains(tag);
        });
        pub.disconnect();
        sub.disconnect();
    }

    /** The outage itself is the scenario: wait out part of it between two rounds of checks. */
    private static void sleepUpTo(long endNanos, Duration step) {
        long left = endNanos - System.nanoTime();
        if (left > 0) {
            try {
                Thread.sleep(Math.min(step.toMillis(), left / 1_000_000 + 1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    private static double orZero(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    private static Set<Integer> missing(Set<Integer> expected, Set<Integer> got) {
        Set<Integer> m = new TreeSet<>(expected);
        m.removeAll(got);
        return m;
    }

    private static void assertHealth(int node, String status, Set<String> degraded) {
        HttpResponse<String> r = Http.get(cluster.node(node).httpPort(), "/health/ready");
        assertEquals(200, r.statusCode(), "node " + node + " stays ready: " + r.body());
        JsonNode body = readTree(r.body());
        assertEquals(status, body.get("status").asText(), r.body());
        assertEquals(degraded, names(body.get("degraded")), r.body());
        HttpResponse<String> live = Http.get(cluster.node(node).httpPort(), "/health/live");
        assertEquals(200, live.statusCode(), live.body());
    }

    private static Set<String> degraded(int node) {
        HttpResponse<String> r = Http.get(cluster.node(node).httpPort(), "/health/ready");
        assertEquals(200, r.statusCode(), "node " + node + " stays ready: " + r.body());
        return names(readTree(r.body()).get("degraded"));
    }

    private static Set<String> names(JsonNode array) {
        Set<String> names = new TreeSet<>();
        array.forEach(n -> names.add(n.asText()));
        return names;
    }

    private static JsonNode readTree(String body) {
        try {
            return JSON.readTree(body);
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + body, e);
        }
    }

    /** Sum of the samples whose line starts with {@code prefix} (name plus, optionally, the first labels). */
    private static double metric(int node, String prefix) {
        String body = Http.get(cluster.node(node).httpPort(), "/metrics").body();
        double sum = 0;
        List<String> matched = new ArrayList<>();
        for (String line : body.split("\n")) {
            if (line.startsWith(prefix + " ") || line.startsWith(prefix + "{") || line.startsWith(prefix + ",")
                    || prefix.contains("{") && line.startsWith(prefix)) {
                matched.add(line);
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return matched.isEmpty() ? Double.NaN : sum;
    }
}
