package io.fleetmq.persistence.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.embedded.EmbeddedRedisServer;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DEVICE queues on the Redis shapes production uses besides a single server: a master found through
 * Sentinel, and a three-master Redis Cluster. Real {@code redis-server} processes, the binary the
 * embedded Redis runs.
 */
class RedisTopologiesTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void stop() {
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            try {
                p.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Starts redis-server with {@code config} (plus port and directory) and waits for its PONG. */
    private int redisServer(String name, List<String> config, boolean sentinel) throws IOException {
        int port = config.contains("cluster-enabled yes") ? clusterPort() : FreePorts.next();
        Path home = Files.createDirectories(dir.resolve(name));
        List<String> lines = new ArrayList<>(List.of("bind 127.0.0.1", "port " + port, "dir " + home,
                "protected-mode no", "save \"\"", "appendonly no"));
        lines.addAll(config);
        Path conf = home.resolve("redis.conf");
        Files.write(conf, lines);
        List<String> command = new ArrayList<>(List.of(EmbeddedRedisServer.executable().getAbsolutePath(), conf.toString()));
        if (sentinel) {
            command.add("--sentinel");
        }
        processes.add(new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(home.resolve("out.log").toFile()).start());
        try {
            Await.until(WAIT, name + " to answer PING", () -> pong(port));
        } catch (AssertionError e) {
            // Say why: the server's own log (a port it could not bind, a setting it refused).
            throw new AssertionError(e.getMessage() + "; " + name + " on port " + port + " logged: "
                    + Files.readString(home.resolve("out.log")), e);
        }
        return port;
    }

    /**
     * A port for a cluster node: Redis also listens on the port 10000 above it (the cluster bus), so
     * that one must be free too, or the node fails to start.
     */
    private static int clusterPort() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = FreePorts.next();
            if (port + 10_000 <= 65_535 && bindable(port + 10_000)) {
                return port;
            }
        }
        throw new IllegalStateException("no port whose cluster bus port is free");
    }

    private static boolean bindable(int port) {
        try (java.net.ServerSocket s = new java.net.ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean pong(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(1_000);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] answer = new byte[7];
            InputStream in = s.getInputStream();
            return in.readNBytes(answer, 0, 7) == 7 && new String(answer, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> stage) {
        return stage.toCompletableFuture().join();
    }

    /** Queues for {@code clients} clients, each in order, through {@code redis}. */
    private static void queueAndReadBack(Redis redis, List<String> clients) {
        DeviceQueues queues = new DeviceQueues(redis.binaryCommands(), "t:", 100, Duration.ofMinutes(5));
        for (String c : clients) {
            for (int m = 0; m < 5; m++) {
                await(queues.append(c, 0, m + 1, (c + "/" + m).getBytes(StandardCharsets.UTF_8)));
            }
        }
        for (String c : clients) {
            List<DeviceQueues.Entry> entries = await(queues.read(c, 0, 100));
            assertEquals(IntStream.range(0, 5).mapToObj(m -> c + "/" + m).toList(),
                    entries.stream().map(e -> new String(e.value(), StandardCharsets.UTF_8)).toList(), c);
            await(queues.remove(c, entries.get(0).seq()));
            assertEquals(4L, await(queues.size(c)), c);
        }
    }

    @Test
    void aRedisClusterUrlReachesEveryMasterAndKeepsEachQueueInOneSlot() throws Exception {
        List<String> clusterConfig = List.of("cluster-enabled yes", "cluster-node-timeout 5000",
                "cluster-config-file nodes.conf");
        int[] ports = {redisServer("c1", clusterConfig, false), redisServer("c2", clusterConfig, false),
                redisServer("c3", clusterConfig, false)};
        List<RedisClient> admins = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                RedisClient admin = RedisClient.create("redis://127.0.0.1:" + ports[i]);
                admins.add(admin);
                StatefulRedisConnection<String, String> c = admin.connect();
                int from = i * SlotHash.SLOT_COUNT / 3;
                int to = (i + 1) * SlotHash.SLOT_COUNT / 3;
                c.sync().clusterAddSlots(IntStream.range(from, to).toArray());
                if (i > 0) {
                    c.sync().clusterMeet("127.0.0.1", ports[0]);
                }
            }
            for (int port : ports) {
                StatefulRedisConnection<String, String> c = admins.get(List.of(ports[0], ports[1], ports[2]).indexOf(port))
                        .connect();
                Await.until(WAIT, "node " + port + " to see the cluster ok",
                        () -> c.sync().clusterInfo().contains("cluster_state:ok"));
            }

            try (Redis redis = Redis.connect(new RedisSettings(
                    "redis-cluster://127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1], Duration.ofSeconds(5)))) {
                assertTrue(redis.healthCheck().check().up(), "health check");
                List<String> clients = IntStream.range(0, 30).mapToObj(i -> "device-" + i).toList();
                queueAndReadBack(redis, clients);

                // The queues are spread over the three masters, and each lives in one slot.
                Set<Integer> masters = new HashSet<>();
                for (String c : clients) {
                    DeviceQueues q = new DeviceQueues(redis.binaryCommands(), "t:", 100, Duration.ofMinutes(5));
                    Set<Integer> slots = new HashSet<>();
                    for (String key : q.keysOf(c)) {
                        slots.add(SlotHash.getSlot(key));
                    }
                    assertEquals(1, slots.size(), c + ": all keys in one slot");
                    int slot = slots.iterator().next();
                    masters.add((int) IntStream.range(0, 3).filter(i -> slot >= i * SlotHash.SLOT_COUNT / 3).count());
                }
                assertEquals(3, masters.size(), "queues on every master");
            }
        } finally {
            admins.forEach(RedisClient::shutdown);
        }
    }

    @Test
    void aRedisSentinelUrlFindsTheMaster() throws Exception {
        int master = redisServer("master", List.of(), false);
        int sentinel = redisServer("sentinel", List.of("sentinel monitor fleet 127.0.0.1 " + master + " 1",
                "sentinel down-after-milliseconds fleet 5000"), true);
        try (Redis redis = Redis.connect(new RedisSettings("redis-sentinel://127.0.0.1:" + sentinel + "#fleet",
                Duration.ofSeconds(5)))) {
            assertTrue(redis.healthCheck().check().up());
            queueAndReadBack(redis, List.of("device-s1", "device-s2"));
        }
        // The writes went to the master Sentinel named.
        try (Redis direct = Redis.connect(new RedisSettings("redis://127.0.0.1:" + master, Duration.ofSeconds(5)))) {
            DeviceQueues q = new DeviceQueues(direct.binaryCommands(), "t:", 100, Duration.ofMinutes(5));
            assertEquals(4L, await(q.size("device-s1")));
        }
    }

    @Test
    void aClusterUrlWithoutNodesIsRefusedWithTheUrlNamed() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Redis.connect(new RedisSettings("redis-cluster://user:secret@", Duration.ofSeconds(1))));
        assertTrue(e.getMessage().startsWith("invalid Redis URL 'redis-cluster://'"), e.getMessage());
        assertTrue(!e.getMessage().contains("secret"), "no password in the message");
        assertEquals(2, Redis.clusterSeeds("rediss-cluster://u:p@h1:7000,h2:7001/0").size());
        assertTrue(Redis.clusterSeeds("rediss-cluster://u:p@h1:7000,h2:7001").get(1).isSsl());
        assertEquals(7001, Redis.clusterSeeds("redis-cluster://h1:7000,h2:7001").get(1).getPort());
    }
}
