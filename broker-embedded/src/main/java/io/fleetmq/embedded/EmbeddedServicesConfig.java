package io.fleetmq.embedded;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Which embedded services to start and where. A port of {@code 0} means "pick a free port"; the chosen port is
 * then kept for later restarts of the same service object.
 *
 * @param dataDir             root of all persistent state; each service uses its own subdirectory
 * @param host                address every service binds to (and nothing else); {@code 127.0.0.1} for loopback only
 * @param kafka               start an in-process Kafka (KRaft, combined broker and controller)
 * @param kafkaPort           Kafka client (PLAINTEXT) port
 * @param kafkaControllerPort Kafka KRaft controller port
 * @param redis               start a Redis child process
 * @param redisPort           Redis port
 * @param postgres            start a PostgreSQL child process
 * @param postgresPort        PostgreSQL port
 * @param redisBinary         which {@code redis-server} runs the embedded Redis
 */
public record EmbeddedServicesConfig(Path dataDir, String host,
        boolean kafka, int kafkaPort, int kafkaControllerPort,
        boolean redis, int redisPort,
        boolean postgres, int postgresPort,
        RedisBinary redisBinary) {

    public static final String LOOPBACK = "127.0.0.1";

    public EmbeddedServicesConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(redisBinary, "redisBinary");
        if (host.isBlank()) {
            throw new IllegalArgumentException("host must not be blank");
        }
        requirePort("kafkaPort", kafkaPort);
        requirePort("kafkaControllerPort", kafkaControllerPort);
        requirePort("redisPort", redisPort);
        requirePort("postgresPort", postgresPort);
        if (kafka && kafkaPort != 0 && kafkaPort == kafkaControllerPort) {
            throw new IllegalArgumentException("kafkaPort and kafkaControllerPort must differ: " + kafkaPort);
        }
    }

    /** With the default choice of Redis binary ({@link RedisBinary#AUTO}). */
    public EmbeddedServicesConfig(Path dataDir, String host, boolean kafka, int kafkaPort, int kafkaControllerPort,
            boolean redis, int redisPort, boolean postgres, int postgresPort) {
        this(dataDir, host, kafka, kafkaPort, kafkaControllerPort, redis, redisPort, postgres, postgresPort,
                RedisBinary.AUTO);
    }

    /** All three services on loopback, each on a free port. */
    public static EmbeddedServicesConfig allOnLoopback(Path dataDir) {
        return new EmbeddedServicesConfig(dataDir, LOOPBACK, true, 0, 0, true, 0, true, 0);
    }

    /** This configuration with Redis run by {@code binary}. */
    public EmbeddedServicesConfig withRedisBinary(RedisBinary binary) {
        return new EmbeddedServicesConfig(dataDir, host, kafka, kafkaPort, kafkaControllerPort, redis, redisPort,
                postgres, postgresPort, binary);
    }

    private static void requirePort(String name, int port) {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException(name + " must be between 0 and 65535: " + port);
        }
    }
}
