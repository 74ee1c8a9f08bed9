package io.fleetmq.bench.connect;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.ClientLoops;
import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.Scram;
import io.fleetmq.bench.report.ConnectReport;
import io.fleetmq.bench.report.LatencySummary;
import io.fleetmq.bench.run.Phases;
import io.fleetmq.bench.scenario.Scenario;
import io.netty.handler.ssl.SslContext;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * The connect scenario: {@code --clients} connectors handshake in a loop through warm-up and the
 * measured window, then the report counts the CONNACKs of the window by code and their latency.
 */
public final class ConnectRun {

    private static final long PROGRESS_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The last handshakes end by CONNACK, close or their own time-out; this is a safety margin on top. */
    private static final Duration STOP_TIMEOUT = ConnectAttempt.CONNACK_TIMEOUT.plusSeconds(5);

    private final BenchOptions options;
    private final PrintStream progress;

    /** @param progress where one line per second goes while the run lasts (stderr on the command line) */
    public ConnectRun(BenchOptions options, PrintStream progress) {
        if (options.scenario() != Scenario.CONNECT) {
            throw new IllegalArgumentException("not a connect run: " + options.scenario().label());
        }
        this.options = options;
        this.progress = progress;
    }

    public ConnectReport run() {
        String runId = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()).substring(2);
        ConnectStats stats = new ConnectStats();
        try (ClientLoops loops = new ClientLoops(options.threads())) {
            progress.printf(Locale.ROOT, "fleetmq-bench %s: connect, MQTT %s, %d connectors, %s against %s:%d%s (%s, %d threads)%n",
                    runId, options.protocol().label(), options.clients(), options.credentials().describe(),
                    options.host(), options.port(), options.tls() == null ? "" : ", " + options.tls().describe(),
                    loops.transport(), options.threads());
            SslContext tls = options.tls() == null ? null : options.tls().clientContext();
            Credentials credentials = options.credentials();
            Scram scram = credentials.authMethod() == null ? null
                    : new Scram(credentials.authMethod(), credentials.username(), credentials.password());
            Phases phases = Phases.startingAt(System.nanoTime(), options.warmup(), options.duration());
            stats.begin(phases);
            List<Connector> connectors = new ArrayList<>();
            for (String clientId : Scenario.connectorIds(options.clients(), runId)) {
                connectors.add(new Connector(loops, options.host(), options.port(), clientId, options.protocol(),
                        credentials, tls, scram, stats, phases));
            }
            connectors.forEach(Connector::start);
            watch(phases, stats);
            awaitStopped(connectors);
            return new ConnectReport(options, runId, loops.transport(), phases.measuredSeconds(),
                    stats.acceptedMeasured(), stats.refusedMeasured(), LatencySummary.of(stats.takeAcceptedLatency()),
                    LatencySummary.of(stats.takeRefusedLatency()), stats.errors().summary());
        }
    }

    private void awaitStopped(List<Connector> connectors) {
        try {
            CompletableFuture.allOf(connectors.stream().map(Connector::stopped).toArray(CompletableFuture[]::new))
                    .get(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // Closing the event loops ends whatever is left; the window's counts are complete already.
            progress.println("some connectors did not stop in time: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sleeps through warm-up and the measured window, printing one progress line per second. */
    private void watch(Phases phases, ConnectStats stats) {
        long lastAccepted = 0;
        long lastRefused = 0;
        long lastAt = phases.start();
        while (true) {
            long now = System.nanoTime();
            if (phases.isOver(now)) {
                return;
            }
            long next = Math.min(lastAt + PROGRESS_EVERY_NANOS, phases.measureTo());
            LockSupport.parkNanos(next - now);
            now = System.nanoTime();
            if (now - lastAt >= PROGRESS_EVERY_NANOS) {
                long accepted = stats.acceptedTotal();
                long refused = stats.refusedTotal();
                double seconds = (now - lastAt) / 1e9;
                progress.printf(Locale.ROOT, "[%5.1f s] %-9s accepted %,10.0f/s  refused %,10.0f/s  errors %d%n",
                        (now - phases.start()) / 1e9, phases.measures(lastAt) ? "measuring" : "warm-up",
                        (accepted - lastAccepted) / seconds, (refused - lastRefused) / seconds,
                        stats.errors().total());
                lastAccepted = accepted;
                lastRefused = refused;
                lastAt = now;
            }
        }
    }
}
