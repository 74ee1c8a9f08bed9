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
}
