package io.fleetmq.core.health;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Whether this node may take traffic: it has finished starting (shared state loaded, topics
 * checked) and every <em>required</em> dependency answers. Readiness means "this node can serve
 * MQTT" (DESIGN.md, "When a node dies"): Kafka and the cluster are required; PostgreSQL and Redis
 * are <em>degradable</em>: while one is away the node still serves MQTT (a DEVICE queue pauses,
 * configuration changes wait) and says so in the report, instead of dropping out of the load
 * balancer together with every other node of the cluster.
 *
 * <p>Checks run concurrently, each on a thread of its own, and an evaluation waits at most
 * {@link #checkTimeout} for them. A check still running from an earlier evaluation is not started
 * again: the new evaluation waits for the same pending result. So a dependency that hangs costs one
 * thread, however often a load balancer asks.
 *
 * <p>Thread-safe; checks are registered during start-up and evaluated on demand.
 */
public final class Readiness implements AutoCloseable {

    /** How long an evaluation waits for the checks unless told otherwise. */
    public static final Duration DEFAULT_CHECK_TIMEOUT = Duration.ofSeconds(2);

    /** What a failing check does to the node. */
    public enum Impact {
        /** The node cannot serve MQTT without it: down means not ready. */
        REQUIRED,
        /** The node serves MQTT without it, with less: down means ready but degraded. */
        DEGRADES
    }

    private final Duration checkTimeout;
    private final List<Registered> checks = new CopyOnWriteArrayList<>();
    private final AtomicReference<String> phase = new AtomicReference<>("starting");
    private final ExecutorService runner;

    public Readiness() {
        this(DEFAULT_CHECK_TIMEOUT);
    }

    public Readiness(Duration checkTimeout) {
        if (checkTimeout.isNegative() || checkTimeout.isZero()) {
            throw new IllegalArgumentException("checkTimeout must be positive");
        }
        this.checkTimeout = checkTimeout;
        AtomicInteger n = new AtomicInteger();
        // Unbounded on purpose: at most one thread per registered check can be busy (see start()),
        // and idle threads go after a minute.
        this.runner = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fleetmq-health-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** A dependency the node cannot serve MQTT without. */
    public void register(HealthCheck check) {
        register(check, Impact.REQUIRED);
    }

    public void register(HealthCheck check, Impact impact) {
        checks.add(new Registered(check, impact));
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

    public Duration checkTimeout() {
        return checkTimeout;
    }

    /**
     * Runs every check now, concurrently, and waits at most {@link #checkTimeout} in all. A check
     * that has not answered by then is reported down ("no answer"); it keeps running, and the next
     * evaluation takes its answer instead of starting another probe.
     */
    public Report evaluate() {
        return evaluateAsync().join();
    }

    /**
     * {@link #evaluate} without blocking the caller: completes within {@link #checkTimeout}, so
     * a server can answer many probes at once without a thread per waiting request.
     */
    public CompletableFuture<Report> evaluateAsync() {
        List<Registered> all = new ArrayList<>(checks);
        List<CompletableFuture<HealthStatus>> answers = new ArrayList<>(all.size());
        for (Registered r : all) {
            // A dependent future of its own: the timeout completes this evaluation's view, never
            // the shared probe, which another evaluation may still wait for.
            answers.add(r.start(runner)
                    .handle((status, error) -> error == null ? status : HealthStatus.down(error))
                    .completeOnTimeout(HealthStatus.down("no answer within " + checkTimeout.toMillis() + " ms"),
                            checkTimeout.toMillis(), TimeUnit.MILLISECONDS));
        }
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).thenApply(done -> {
            Map<String, HealthStatus> results = new LinkedHashMap<>();
            Map<String, Impact> impacts = new LinkedHashMap<>();
            for (int i = 0; i < all.size(); i++) {
                results.put(all.get(i).check.name(), answers.get(i).join());
                impacts.put(all.get(i).check.name(), all.get(i).impact);
            }
            return report(results, impacts);
        });
    }

    /**
     * The last answer of the named check without waiting for anything; starts a new probe in the
     * background if none is running and the last answer is older than {@code maxAge}. For metrics,
     * which must neither block a scrape nor go stale when nobody asks for readiness.
     */
    public Optional<HealthStatus> lastKnown(String name, Duration maxAge) {
        for (Registered r : checks) {
            if (r.check.name().equals(name)) {
                Answer last = r.last.get();
                if (last == null || System.nanoTime() - last.atNanos > maxAge.toNanos()) {
                    r.start(runner);
                }
                return Optional.ofNullable(last).map(Answer::status);
            }
        }
        return Optional.empty();
    }

    /** The names of the registered checks, in registration order. */
    public List<String> names() {
        return checks.stream().map(r -> r.check.name()).toList();
    }

    /**
     * The verdict from each check's last answer, without probing anything: for liveness, which
     * must answer at once however the dependencies are.
     */
    public Report lastReport() {
        Map<String, HealthStatus> results = new LinkedHashMap<>();
        Map<String, Impact> impacts = new LinkedHashMap<>();
        for (Registered r : checks) {
            Answer last = r.last.get();
            results.put(r.check.name(), last != null ? last.status : HealthStatus.down("not checked yet"));
            impacts.put(r.check.name(), r.impact);
        }
        return report(results, impacts);
    }

    private Report report(Map<String, HealthStatus> results, Map<String, Impact> impacts) {
        String currentPhase = phase.get();
        boolean requiredUp = true;
        Set<String> degraded = new LinkedHashSet<>();
        for (Map.Entry<String, HealthStatus> e : results.entrySet()) {
            if (!e.getValue().up()) {
                if (impacts.get(e.getKey()) == Impact.REQUIRED) {
                    requiredUp = false;
                } else {
                    degraded.add(e.getKey());
                }
            }
        }
        boolean ready = "started".equals(currentPhase) && requiredUp;
        return new Report(ready, currentPhase, results, impacts, degraded);
    }

    /** Stops the check threads; a check still hanging is interrupted. */
    @Override
    public void close() {
        runner.shutdownNow();
    }

    private record Answer(HealthStatus status, long atNanos) {
    }

    private static final class Registered {
        final HealthCheck check;
        final Impact impact;
        /** The probe in progress, or the last one done. */
        final AtomicReference<CompletableFuture<HealthStatus>> current = new AtomicReference<>();
        final AtomicReference<Answer> last = new AtomicReference<>();

        Registered(HealthCheck check, Impact impact) {
            this.check = check;
            this.impact = impact;
        }

        /** The running probe if there is one, else a new one. */
        CompletableFuture<HealthStatus> start(ExecutorService runner) {
            while (true) {
                CompletableFuture<HealthStatus> running = current.get();
                if (running != null && !running.isDone()) {
                    return running;
                }
                CompletableFuture<HealthStatus> next = new CompletableFuture<>();
                if (!current.compareAndSet(running, next)) {
                    continue; // another evaluation started one a moment ago: share it
                }
                try {
                    runner.execute(() -> {
                        try {
                            next.complete(probe());
                        } catch (Error e) {
                            next.completeExceptionally(e); // never leave a probe pending for good
                            throw e;
                        }
                    });
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    next.complete(HealthStatus.down("node stopping"));
                }
                return next;
            }
        }

        private HealthStatus probe() {
            HealthStatus status;
            try {
                status = check.check();
            } catch (RuntimeException e) {
                status = HealthStatus.down(e);
            }
            last.set(new Answer(status, System.nanoTime()));
            return status;
        }
    }

    /**
     * One evaluation: overall verdict, life-cycle phase, each dependency's status and impact, and
     * the degradable dependencies that are down now.
     */
    public record Report(boolean ready, String phase, Map<String, HealthStatus> checks, Map<String, Impact> impacts,
                         Set<String> degraded) {
        public Report {
            checks = Collections.unmodifiableMap(new LinkedHashMap<>(checks));
            impacts = Collections.unmodifiableMap(new LinkedHashMap<>(impacts));
            degraded = Collections.unmodifiableSet(new LinkedHashSet<>(degraded));
        }

        /** Ready, but a degradable dependency is down. */
        public boolean isDegraded() {
            return ready && !degraded.isEmpty();
        }
    }
}
