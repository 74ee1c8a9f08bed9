package io.fleetmq.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;

import io.fleetmq.embedded.EmbeddedServices;
import io.fleetmq.embedded.EmbeddedServicesConfig;
import io.fleetmq.embedded.RedisBinary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka, Redis and PostgreSQL for tests, shared by all tests of a JVM.
 *
 * <p>Each service comes from the environment when its variable is set ({@value #KAFKA_ENV}, {@value #REDIS_ENV},
 * {@value #DATABASE_URL_ENV} with {@value #DATABASE_USER_ENV} and {@value #DATABASE_PASSWORD_ENV}), so CI or a
 * developer can point tests at real servers. Every service without a variable is started embedded, once, on free
 * loopback ports in a temporary directory that is removed again, together with the services, when the JVM exits.
 * {@value #REDIS_BINARY_ENV} chooses the binary of an embedded Redis ({@code auto}, {@code bundled}, {@code system}
 * or a path; see {@link RedisBinary}), so the suite can be run on either.
 *
 * <p>Tests share the services, so each test should use its own topics, keys and tables (or clean up).
 */
public final class TestServices {

    public static final String KAFKA_ENV = "FLEETMQ_TEST_KAFKA_BOOTSTRAP_SERVERS";
    public static final String REDIS_ENV = "FLEETMQ_TEST_REDIS_URL";
    public static final String REDIS_BINARY_ENV = "FLEETMQ_TEST_REDIS_BINARY";
    public static final String DATABASE_URL_ENV = "FLEETMQ_TEST_DATABASE_URL";
    public static final String DATABASE_USER_ENV = "FLEETMQ_TEST_DATABASE_USER";
    public static final String DATABASE_PASSWORD_ENV = "FLEETMQ_TEST_DATABASE_PASSWORD";

    private static final Logger log = LoggerFactory.getLogger(TestServices.class);

    private static TestServices shared;
    private static RuntimeException sharedFailure;

    private final String kafkaBootstrapServers;
    private final String redisUrl;
    private final String databaseUrl;
    private final String databaseUser;
    private final String databasePassword;
    private final EmbeddedServices embedded;

    private TestServices(String kafkaBootstrapServers, String redisUrl, String databaseUrl, String databaseUser,
            String databasePassword, EmbeddedServices embedded) {
        this.kafkaBootstrapServers = kafkaBootstrapServers;
        this.redisUrl = redisUrl;
        this.databaseUrl = databaseUrl;
        this.databaseUser = databaseUser;
        this.databasePassword = databasePassword;
        this.embedded = embedded;
    }

    /**
     * The services of this JVM, started on first use. A failed start is remembered and rethrown on every call,
     * so each test that needs the services reports the same cause.
     */
    public static synchronized TestServices shared() {
        if (sharedFailure != null) {
            throw sharedFailure;
        }
        if (shared == null) {
            try {
                shared = create(System.getenv());
            } catch (RuntimeException e) {
                sharedFailure = e;
                throw e;
            }
        }
        return shared;
    }

    /** Resolves each service from {@code environment} or starts it embedded. */
    static TestServices create(Map<String, String> environment) {
        String kafka = value(environment, KAFKA_ENV);
        String redis = value(environment, REDIS_ENV);
        String database = value(environment, DATABASE_URL_ENV);
        boolean embedKafka = kafka == null;
        boolean embedRedis = redis == null;
        boolean embedDatabase = database == null;
        if (!embedKafka && !embedRedis && !embedDatabase) {
            log.info("test services from the environment: Kafka {}, Redis {}, PostgreSQL {}", kafka, redis, database);
            return new TestServices(kafka, redis, database, value(environment, DATABASE_USER_ENV),
                    value(environment, DATABASE_PASSWORD_ENV), null);
        }

        RedisBinary redisBinary;
        try {
            redisBinary = RedisBinary.of(value(environment, REDIS_BINARY_ENV));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(REDIS_BINARY_ENV + " " + e.getMessage(), e);
        }
        Path dataDir = createTempDir();
        EmbeddedServices services;
        try {
            services = EmbeddedServices.start(new EmbeddedServicesConfig(dataDir, EmbeddedServicesConfig.LOOPBACK,
                    embedKafka, 0, 0, embedRedis, 0, embedDatabase, 0, redisBinary));
        } catch (RuntimeException e) {
            deleteRecursively(dataDir);
            throw e;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                services.close();
            } finally {
                deleteRecursively(dataDir);
            }
        }, "fleetmq-test-services-shutdown"));

        TestServices testServices = new TestServices(
                embedKafka ? services.kafkaBootstrapServers() : kafka,
                embedRedis ? services.redisUrl() : redis,
                embedDatabase ? services.databaseUrl() : database,
                embedDatabase ? services.databaseUser() : value(environment, DATABASE_USER_ENV),
                embedDatabase ? services.databasePassword() : value(environment, DATABASE_PASSWORD_ENV),
                services);
        log.info("test services: Kafka {} ({}), Redis {} ({}), PostgreSQL {} ({})",
                testServices.kafkaBootstrapServers, origin(embedKafka),
                testServices.redisUrl, embedRedis ? "embedded, " + redisBinary + " binary" : origin(false),
                testServices.databaseUrl, origin(embedDatabase));
        return testServices;
    }

    public String kafkaBootstrapServers() {
        return kafkaBootstrapServers;
    }

    public String redisUrl() {
        return redisUrl;
    }

    /** A {@code jdbc:postgresql:} URL. */
    public String databaseUrl() {
        return databaseUrl;
    }

    /** May be {@code null} for an external database whose user is not set (or is part of the URL). */
    public String databaseUser() {
        return databaseUser;
    }

    /** May be {@code null} for an external database whose password is not set (or is part of the URL). */
    public String databasePassword() {
        return databasePassword;
    }

    /** Whether any of the services runs embedded in this JVM rather than coming from the environment. */
    public boolean anyEmbedded() {
        return embedded != null;
    }

    private static String value(Map<String, String> environment, String name) {
        String value = environment.get(name);
        return value == null || value.isBlank() ? null : value.strip();
    }

    private static String origin(boolean embedded) {
        return embedded ? "embedded" : "from environment";
    }

    private static Path createTempDir() {
        try {
            return Files.createTempDirectory("fleetmq-test-services-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a data directory for the test services", e);
        }
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path directory, IOException failure) throws IOException {
                    Files.delete(directory);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // Left behind in the temp dir at worst; not worth failing a test run over.
            log.warn("could not delete test services data in {}: {}", dir, e.toString());
        }
    }
}
