package io.fleetmq.core.health;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Whether this node may take traffic: it has finished starting (shared state loaded, topics
 * checked) and every registered dependency answers. Thread-safe; checks are registered during
 * start-up and evaluated on demand.
 */
public final class Readiness {

    private final List<HealthCheck> checks = new CopyOnWriteArrayList<>();
    private final AtomicReference<String> phase = new AtomicReference<>("starting");

    public void register(HealthCheck check) {
        checks.add(check);
    }

    /** Start-up is complete; from now on readiness only depends on the checks. */
    public void started() {
        phase.set("started");
    }

    /** The node is stopping; it reports not ready whatever the dependencies say. */
    public void stopping() {
        phase.set("stopping");
    }

    public String phase() {
        return phase.get();
    }

    /** Runs every check now (blocking, each bounded by its own timeout). */
    public Report evaluate() {
        Map<String, HealthStatus> results = new LinkedHashMap<>();
        for (HealthCheck check : new ArrayList<>(checks)) {
            HealthStatus status;
            try {
                status = check.check();
            } catch (RuntimeException e) {
                status = HealthStatus.down(e);
            }
            results.put(check.name(), status);
        }
        String currentPhase = phase.get();
        boolean ready = "started".equals(currentPhase)
                && results.values().stream().allMatch(HealthStatus::up);
        return new Report(ready, currentPhase, results);
    }

    /** One evaluation: overall verdict, life-cycle phase, and each dependency's status. */
    public record Report(boolean ready, String phase, Map<String, HealthStatus> checks) {
        public Report {
            checks = Collections.unmodifiableMap(new LinkedHashMap<>(checks));
        }
    }
}
