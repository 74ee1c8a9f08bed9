/**
 * Kafka, Redis and PostgreSQL embedded in the broker's JVM for standalone mode and for tests.
 *
 * <p>Entry point: {@link io.fleetmq.embedded.EmbeddedServices#start(io.fleetmq.embedded.EmbeddedServicesConfig)}.
 * Kafka runs in-process (KRaft, one combined node); Redis and PostgreSQL run as child processes from binaries
 * shipped in Maven artifacts, so nothing has to be installed (Redis runs the system's {@code redis-server} instead
 * when there is one, see {@link io.fleetmq.embedded.RedisBinary}). All state lives under the configured data dir:
 * {@code kafka/} and {@code kafka-cluster-id}, {@code redis/}, {@code postgres/} and {@code postgres-password}.
 *
 * <p>Logging goes through slf4j only (Kafka's log4j2 calls are bridged by log4j-to-slf4j); this module ships no
 * logging configuration. The services are chatty at INFO; applications usually want these loggers at WARN:
 * {@code kafka}, {@code org.apache.kafka}, {@code state.change.logger}, {@code io.zonky} (PostgreSQL server
 * output) and {@code io.fleetmq.embedded.EmbeddedRedisServer.output} (Redis server output).
 */
package io.fleetmq.embedded;
