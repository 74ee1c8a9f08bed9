package io.fleetmq.app.metrics;

import io.fleetmq.core.health.Readiness;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;

/**
 * {@code fleetmq_dependency_up{dependency=...,required=...}}: 1 while a dependency answered its
 * last health check, 0 while it did not, NaN before the first answer. The gauge reads the last
 * answer and asks for a fresh one in the background, so a scrape never waits for a dependency that
 * hangs, and the value stays current even when nobody polls {@code /health/ready}.
 */
public final class DependencyMeters {

    /** How old a dependency's last health answer may be before a scrape asks for a new one. */
    static final Duration MAX_AGE = Duration.ofSeconds(1);

    private DependencyMeters() {
    }

    public static void register(MeterRegistry registry, Readiness readiness, String dependency, Readiness.Impact impact) {
        Gauge.builder("fleetmq.dependency.up", readiness, r -> r.lastKnown(dependency, MAX_AGE)
                        .map(status -> status.up() ? 1.0 : 0.0).orElse(Double.NaN))
                .description("Whether a dependency answered its last health check (1) or not (0)")
                .tag("dependency", dependency)
                .tag("required", Boolean.toString(impact == Readiness.Impact.REQUIRED))
                .register(registry);
    }

    /**
     * {@code fleetmq_ready}: 1 while the node would answer {@code /health/ready} with 200, 0 while
     * starting, stopping or missing a required dependency. Built from the checks' last answers (each
     * refreshed in the background when older than a second), so a scrape never waits.
     */
    public static void registerReady(MeterRegistry registry, Readiness readiness) {
        Gauge.builder("fleetmq.ready", readiness, r -> {
                    r.names().forEach(name -> r.lastKnown(name, MAX_AGE));
                    return r.lastReport().ready() ? 1.0 : 0.0;
                })
                .description("Whether the node is ready for clients (1) or not (0), as /health/ready says")
                .register(registry);
    }
}
