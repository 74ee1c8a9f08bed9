package io.fleetmq.persistence.redis;

import io.fleetmq.core.health.HealthCheck;
import io.fleetmq.core.health.HealthStatus;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.concurrent.TimeUnit;

/**
 * This node's connection to Redis. Lettuce multiplexes every command over one connection and
 * reconnects by itself, so one connection per node is the right shape.
 */
public final class Redis implements AutoCloseable {

    private final RedisSettings settings;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;

    private Redis(RedisSettings settings, RedisClient client, StatefulRedisConnection<String, String> connection) {
        this.settings = settings;
        this.client = client;
        this.connection = connection;
    }

    /**
     * Connects and checks the server answers.
     *
     * @throws IllegalStateException with a one-line reason if the URL is invalid or Redis is unreachable
     */
    public static Redis connect(RedisSettings settings) {
        RedisURI uri;
        try {
            uri = RedisURI.create(settings.url());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("invalid Redis URL '" + settings.displayUrl() + "': " + e.getMessage(), e);
        }
        uri.setTimeout(settings.commandTimeout());
        RedisClient client = RedisClient.create(uri);
        client.setOptions(ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(settings.commandTimeout()).build())
                .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
                // Commands issued while Redis is away fail fast instead of piling up in memory.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
        try {
            StatefulRedisConnection<String, String> connection = client.connect();
            connection.sync().ping();
            return new Redis(settings, client, connection);
        } catch (RuntimeException e) {
            client.shutdown(0, 2, TimeUnit.SECONDS);
            throw new IllegalStateException("cannot connect to Redis at " + settings.displayUrl() + ": "
                    + HealthStatus.describe(e), e);
        }
    }

    public StatefulRedisConnection<String, String> connection() {
        return connection;
    }

    private StatefulRedisConnection<String, byte[]> binary;

    /** A second connection whose values are bytes, for message queues; opened on first use. */
    public synchronized StatefulRedisConnection<String, byte[]> binaryConnection() {
        if (binary == null) {
            binary = client.connect(io.lettuce.core.codec.RedisCodec.of(io.lettuce.core.codec.StringCodec.UTF8,
                    io.lettuce.core.codec.ByteArrayCodec.INSTANCE));
        }
        return binary;
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
                    String pong = connection.sync().ping();
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
    }
}
