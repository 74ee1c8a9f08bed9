package io.fleetmq.core.health;

/**
 * A dependency the node cannot serve without (Kafka, Redis, PostgreSQL, ...). Implemented by the
 * module that owns the connection; the admin HTTP server asks all of them for {@code /health/ready}.
 *
 * <p>Implementations may block for at most their own short timeout: callers run checks off the
 * I/O threads.
 */
public interface HealthCheck {

    /** Short, stable name shown in the readiness report, e.g. {@code kafka}. */
    String name();

    /** Probes the dependency now. Never throws: a failure is a {@link HealthStatus#down}. */
    HealthStatus check();
}
