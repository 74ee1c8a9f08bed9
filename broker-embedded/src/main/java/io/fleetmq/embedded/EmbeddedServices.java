package io.fleetmq.embedded;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded Kafka, Redis and PostgreSQL of standalone mode (and of tests), started together and stopped
 * together. All state lives under {@link EmbeddedServicesConfig#dataDir()}, so starting again on the same
 * directory finds the earlier data.
 */
public final class EmbeddedServices implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedServices.class);

    private final EmbeddedKafkaServer kafka;
    private final EmbeddedRedisServer redis;
    private final EmbeddedPostgresServer postgres;
    private final String kafkaBootstrapServers;
    private final String redisUrl;
    private final String databaseUrl;
    private final String databaseUser;
    private final String databasePassword;
    private boolean closed;

    private EmbeddedServices(EmbeddedKafkaServer kafka, EmbeddedRedisServer redis, EmbeddedPostgresServer postgres) {
        this.kafka = kafka;
        this.redis = redis;
        this.postgres = postgres;
        this.kafkaBootstrapServers = kafka == null ? null : kafka.bootstrapServers();
        this.redisUrl = redis == null ? null : redis.url();
        this.databaseUrl = postgres == null ? null : postgres.jdbcUrl();
        this.databaseUser = postgres == null ? null : postgres.user();
        this.databasePassword = postgres == null ? null : postgres.password();
    }

    /**
     * Starts the enabled services in parallel (they are independent and each spends most of its start waiting on
     * disk or a child process). If any fails, the others are stopped again before the failure is thrown.
     *
     * @throws EmbeddedServiceException naming the service that failed and why
     */
    public static EmbeddedServices start(EmbeddedServicesConfig config) {
        long begin = System.nanoTime();
        EmbeddedKafkaServer kafka = config.kafka()
                ? new EmbeddedKafkaServer(config.dataDir(), config.host(), config.kafkaPort(), config.kafkaControllerPort())
                : null;
        EmbeddedRedisServer redis = config.redis()
                ? new EmbeddedRedisServer(config.dataDir(), config.host(), config.redisPort(), config.redisBinary())
                : null;
        EmbeddedPostgresServer postgres = config.postgres()
                ? new EmbeddedPostgresServer(config.dataDir(), config.host(), config.postgresPort())
                : null;

        List<Runnable> starts = new ArrayList<>();
        // PostgreSQL and Kafka take longest, so they are submitted first.
        if (postgres != null) {
            starts.add(postgres::start);
        }
        if (kafka != null) {
            starts.add(kafka::start);
        }
        if (redis != null) {
            starts.add(redis::start);
        }
        List<Throwable> failures = runAll(starts);
        if (!failures.isEmpty()) {
            List<Throwable> stopFailures = stopAll(kafka, redis, postgres);
            Throwable first = failures.get(0);
            EmbeddedServiceException thrown = first instanceof EmbeddedServiceException e
                    ? e
                    : EmbeddedServiceException.wrap("services", "start", first);
            failures.subList(1, failures.size()).forEach(thrown::addSuppressed);
            stopFailures.forEach(thrown::addSuppressed);
            throw thrown;
        }
        EmbeddedServices services = new EmbeddedServices(kafka, redis, postgres);
        log.info("embedded services ready in {} ms: {}", (System.nanoTime() - begin) / 1_000_000, services);
        return services;
    }

    /** {@code host:port} of the embedded Kafka, or {@code null} if it was not enabled. */
    public String kafkaBootstrapServers() {
        return kafkaBootstrapServers;
    }

    /** {@code redis://host:port} of the embedded Redis, or {@code null} if it was not enabled. */
    public String redisUrl() {
        return redisUrl;
    }

    /** {@code jdbc:postgresql://host:port/fleetmq}, or {@code null} if PostgreSQL was not enabled. */
    public String databaseUrl() {
        return databaseUrl;
    }

    public String databaseUser() {
        return databaseUser;
    }

    public String databasePassword() {
        return databasePassword;
    }

    /** The addresses of the enabled services. */
    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        if (kafkaBootstrapServers != null) {
            parts.add("Kafka " + kafkaBootstrapServers);
        }
        if (redisUrl != null) {
            parts.add("Redis " + redisUrl);
        }
        if (databaseUrl != null) {
            parts.add("PostgreSQL " + databaseUrl);
        }
        return parts.isEmpty() ? "no services" : String.join(", ", parts);
    }

    /**
     * Stops Kafka first (it may still be writing), then Redis, then PostgreSQL, and returns only when their
     * threads and processes are gone. Calling it again does nothing.
     *
     * @throws EmbeddedServiceException if a service failed to stop; the others are stopped regardless
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        long begin = System.nanoTime();
        List<Throwable> failures = stopAll(kafka, redis, postgres);
        if (!failures.isEmpty()) {
            EmbeddedServiceException thrown = failures.get(0) instanceof EmbeddedServiceException e
                    ? e
                    : EmbeddedServiceException.wrap("services", "stop", failures.get(0));
            failures.subList(1, failures.size()).forEach(thrown::addSuppressed);
            throw thrown;
        }
        log.info("embedded services stopped in {} ms", (System.nanoTime() - begin) / 1_000_000);
    }

    private static List<Throwable> runAll(List<Runnable> tasks) {
        List<Throwable> failures = new ArrayList<>();
        if (tasks.isEmpty()) {
            return failures;
        }
        AtomicInteger threads = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(tasks.size(), task -> {
            Thread thread = new Thread(task, "embedded-services-start-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<?>> futures = new ArrayList<>();
            tasks.forEach(task -> futures.add(executor.submit(task)));
            // Every start is awaited, even after a failure, so that whatever did start can be stopped again.
            for (Future<?> future : futures) {
                try {
                    future.get();
                } catch (ExecutionException e) {
                    failures.add(e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    failures.add(e);
                }
            }
        } finally {
            executor.shutdownNow();
        }
        return failures;
    }

    private static List<Throwable> stopAll(EmbeddedKafkaServer kafka, EmbeddedRedisServer redis,
            EmbeddedPostgresServer postgres) {
        List<Throwable> failures = new ArrayList<>();
        if (kafka != null) {
            stop(EmbeddedKafkaServer.SERVICE, kafka::stop, failures);
        }
        if (redis != null) {
            stop(EmbeddedRedisServer.SERVICE, redis::stop, failures);
        }
        if (postgres != null) {
            stop(EmbeddedPostgresServer.SERVICE, postgres::stop, failures);
        }
        return failures;
    }

    private static void stop(String service, Runnable stop, List<Throwable> failures) {
        try {
            stop.run();
        } catch (RuntimeException e) {
            log.warn("stopping embedded {} failed", service, e);
            failures.add(EmbeddedServiceException.wrap(service, "stop", e));
        }
    }
}
