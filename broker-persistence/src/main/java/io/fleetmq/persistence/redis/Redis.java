package io.fleetmq.persistence.redis;

import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * This node's connection to Redis: a standalone server ({@code redis://}, {@code rediss://} with
 * TLS), a master found through Sentinel ({@code redis-sentinel://host:26379[,host:26379]#master}),
 * or a Redis Cluster ({@code redis-cluster://host:6379[,host:6379...]}, {@code rediss-cluster://}
 * with TLS; the listed nodes are where the client learns the cluster's layout). Lettuce multiplexes
 * every command over one connection and reconnects by itself, so one connection per node is the
 * right shape; in a cluster it routes each command to the node owning its keys.
 */
public final class Redis implements AutoCloseable {

    /** Commands a cluster connection holds per master while that master is not connected. */
    private static final int CLUSTER_REQUEST_QUEUE = 10_000;

    /**
     * Longest wait between two reconnect attempts. Lettuce's default grows to 30 s, which after an
     * outage of a minute or more leaves the node without Redis (DEVICE queues paused) for up to
     * 30 s after Redis is back; one attempt a second costs nothing and resumes them within a second.
     */
    static final java.time.Duration MAX_RECONNECT_DELAY = java.time.Duration.ofSeconds(1);

    private final RedisSettings settings;
    private final ClientResources resources;
    private final AbstractRedisClient client;
    private final StatefulConnection<String, String> connection;
    private final RedisClusterCommands<String, String> sync;
    private final Supplier<StatefulConnection<String, byte[]>> binaryFactory;
    private final java.util.function.Function<StatefulConnection<String, byte[]>,
            RedisClusterAsyncCommands<String, byte[]>> binaryCommands;
    private StatefulConnection<String, byte[]> binary;

    private Redis(RedisSettings settings, ClientResources resources, AbstractRedisClient client, StatefulConnection<String, String> connection,
            RedisClusterCommands<String, String> sync, Supplier<StatefulConnection<String, byte[]>> binaryFactory,
            java.util.function.Function<StatefulConnection<String, byte[]>, RedisClusterAsyncCommands<String, byte[]>> binaryCommands) {
        this.settings = settings;
        this.resources = resources;
        this.client = client;
        this.connection = connection;
        this.sync = sync;
        this.binaryFactory = binaryFactory;
        this.binaryCommands = binaryCommands;
    }

    /**
     * Connects and checks the server answers.
     *
     * @throws IllegalStateException with a one-line reason if the URL is invalid or Redis is unreachable
     */
    public static Redis connect(RedisSettings settings) {
        return connect(settings, null);
    }

    /**
     * As {@link #connect(RedisSettings)}, timing every command in {@code meters} when it is not null:
     * {@code lettuce_command_completion_seconds} and {@code lettuce_command_firstresponse_seconds}
     * by {@code command} and {@code remote} (the server). Count, sum and max only: no percentiles
     * and no histogram, so recording a command is a timer lookup by command and two adds.
     */
    public static Redis connect(RedisSettings settings, io.micrometer.core.instrument.MeterRegistry meters) {
        String url = settings.url();
        boolean cluster = url.startsWith("redis-cluster://") || url.startsWith("rediss-cluster://");
        List<RedisURI> uris;
        try {
            uris = cluster ? clusterSeeds(url) : List.of(RedisURI.create(url));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("invalid Redis URL '" + settings.displayUrl() + "': " + e.getMessage(), e);
        }
        for (RedisURI uri : uris) {
            uri.setTimeout(settings.commandTimeout());
        }
        SocketOptions socket = SocketOptions.builder().connectTimeout(settings.commandTimeout()).build();
        TimeoutOptions timeouts = TimeoutOptions.enabled(settings.commandTimeout());
        // Commands issued while Redis is away fail fast instead of piling up in memory.
        ClientOptions.DisconnectedBehavior rejectWhileAway = ClientOptions.DisconnectedBehavior.REJECT_COMMANDS;
        RedisCodec<String, byte[]> bytes = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);
        AbstractRedisClient client = null;
        DefaultClientResources.Builder resourceSettings = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(java.time.Duration.ofMillis(10), MAX_RECONNECT_DELAY, 2,
                        TimeUnit.MILLISECONDS));
        if (meters != null) {
            resourceSettings.commandLatencyRecorder(new io.lettuce.core.metrics.MicrometerCommandLatencyRecorder(meters,
                    io.lettuce.core.metrics.MicrometerOptions.builder().enable().histogram(false)
                            .localDistinction(false).targetPercentiles(new double[0]).build()));
        }
        ClientResources resources = resourceSettings.build();
        try {
            if (cluster) {
                RedisClusterClient c = RedisClusterClient.create(resources, uris);
                client = c;
                c.setOptions(ClusterClientOptions.builder()
                        // The connection to each master opens on its first command, which must wait
                        // for it rather than be rejected; the queue is bounded and every command
                        // still fails after the command timeout while a master is away.
                        .socketOptions(socket).timeoutOptions(timeouts)
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS)
                        .requestQueueSize(CLUSTER_REQUEST_QUEUE)
                        // Follows failovers and resharding: on MOVED/ASK and other triggers, and every minute.
                        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                .enableAllAdaptiveRefreshTriggers()
                                .enablePeriodicRefresh(java.time.Duration.ofMinutes(1))
                                .build())
                        .build());
                StatefulRedisClusterConnection<String, String> conn = c.connect();
                conn.sync().ping();
                return new Redis(settings, resources, c, conn, conn.sync(), () -> c.connect(bytes),
                        b -> ((StatefulRedisClusterConnection<String, byte[]>) b).async());
            }
            RedisClient c = RedisClient.create(resources, uris.get(0));
            client = c;
            c.setOptions(ClientOptions.builder()
                    .socketOptions(socket).timeoutOptions(timeouts).disconnectedBehavior(rejectWhileAway)
                    .build());
            StatefulRedisConnection<String, String> conn = c.connect();
            conn.sync().ping();
            return new Redis(settings, resources, c, conn, conn.sync(), () -> c.connect(bytes),
                    b -> ((StatefulRedisConnection<String, byte[]>) b).async());
        } catch (RuntimeException e) {
            if (client != null) {
                client.shutdown(0, 2, TimeUnit.SECONDS);
            }
            resources.shutdown(0, 2, TimeUnit.SECONDS);
            throw new IllegalStateException("cannot connect to Redis at " + settings.displayUrl() + ": "
                    + HealthStatus.describe(e), e);
        }
    }

    /**
     * The seed nodes of {@code redis-cluster://[user:password@]host:port[,host:port...]}: each
     * becomes a {@code redis://} (or {@code rediss://}) URI with the same credentials.
     */
    static List<RedisURI> clusterSeeds(String url) {
        boolean tls = url.startsWith("rediss-cluster://");
        String rest = url.substring(url.indexOf("://") + 3);
        String credentials = "";
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            credentials = rest.substring(0, at + 1);
            rest = rest.substring(at + 1);
        }
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            rest = rest.substring(0, slash); // a database number means nothing to a cluster
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String hostPort : rest.split(",")) {
            if (hostPort.isBlank()) {
                throw new IllegalArgumentException("empty host in the list of cluster nodes");
            }
            seeds.add(RedisURI.create((tls ? "rediss://" : "redis://") + credentials + hostPort.trim()));
        }
        return seeds;
    }

    /** Blocking commands with text values, for checks and tools; in a cluster they go to the node owning their keys. */
    public RedisClusterCommands<String, String> sync() {
        return sync;
    }

    /**
     * Async commands on a second connection whose values are bytes, for message queues; opened on
     * first use. In a cluster they go to the node that owns their keys.
     */
    public synchronized RedisClusterAsyncCommands<String, byte[]> binaryCommands() {
        if (binary == null) {
            binary = binaryFactory.get();
        }
        return binaryCommands.apply(binary);
    }

    public HealthCheck healthCheck() {
        return new HealthCheck() {
            @Override
            public String name() {
                return "redis";
            }

            @Override
            public HealthStatus check() {
                try {
                    String pong = sync.ping();
                    return "PONG".equals(pong)
                            ? HealthStatus.up("connected to " + settings.displayUrl())
                            : HealthStatus.down("unexpected answer to PING: " + pong);
                } catch (RuntimeException e) {
                    return HealthStatus.down(e);
                }
            }
        };
    }

    @Override
    public void close() {
        synchronized (this) {
            if (binary != null) {
                binary.close();
            }
        }
        connection.close();
        client.shutdown(0, 2, TimeUnit.SECONDS);
        resources.shutdown(0, 2, TimeUnit.SECONDS); // ours, so the client leaves it running
    }
}
