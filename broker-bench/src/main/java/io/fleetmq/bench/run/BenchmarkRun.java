package io.fleetmq.bench.run;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.ClientLoops;
import io.fleetmq.bench.client.MqttConnection;
import io.fleetmq.bench.report.BenchReport;
import io.fleetmq.bench.probe.BrokerProbe;
import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.report.IntervalSample;
import io.fleetmq.bench.report.LatencySummary;
import io.fleetmq.bench.scenario.Topology;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one benchmark end to end: connect and subscribe everyone, publish through warm-up and the
 * measured window, wait for stragglers, disconnect, and report.
 *
 * <p>A run needs its whole topology: if any client cannot connect or subscribe, nothing is published
 * and the report says "aborted" with every failure counted. A half-connected fan-out would report a
 * throughput for a different run than the one asked for.
 */
public final class BenchmarkRun {

    /** CONNECTs in flight at once; a burst of hundreds can overflow a broker's listen backlog. */
    private static final int CONNECT_CONCURRENCY = 64;
    /** The drain ends early once nothing has arrived or been acknowledged for this long. */
    private static final Duration DRAIN_IDLE = Duration.ofSeconds(1);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final long PROGRESS_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Room for the topic and the PUBLISH header on top of the payload. */
    private static final int PACKET_HEADROOM = 4096;

    private final BenchOptions options;
    private final PrintStream progress;

    /** @param progress where one line per second goes while the run lasts (stderr on the command line) */
    public BenchmarkRun(BenchOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    public BenchReport run() {
        String runId = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()).substring(2);
        Topology topology = options.scenario().topology(options.clients(), runId);
        RunStats stats = new RunStats(options.probes().series());
        SoakSeries series = options.probes().series()
                ? new SoakSeries(options.probes().reportEvery(), stats, new BrokerProbe(options.probes(), progress), progress)
                : null;
        MqttQoS qos = MqttQoS.valueOf(options.qos());
        double ratePerPublisher = (double) options.rate() / topology.publishers().size();

        List<Subscriber> subscribers = new ArrayList<>();
        List<Publisher> publishers = new ArrayList<>();
        List<MqttConnection> subscriberConnections = new ArrayList<>();
        List<MqttConnection> publisherConnections = new ArrayList<>();
        for (Topology.Subscriber spec : topology.subscribers()) {
            Subscriber subscriber = new Subscriber(spec, topology.publishers().size(), stats);
            subscribers.add(subscriber);
            subscriberConnections.add(new MqttConnection(spec.clientId(), options.protocol(), subscriber, stats::error)
                    .sessionExpiry(options.sessionExpiry())
                    .credentials(options.credentials()));
        }
        for (Topology.Publisher spec : topology.publishers()) {
            Publisher publisher = new Publisher(spec, qos, options.payloadBytes(), ratePerPublisher,
                    options.inflight(), stats);
            MqttConnection connection = new MqttConnection(spec.clientId(), options.protocol(), publisher, stats::error)
                    .credentials(options.credentials());
            publisher.bind(connection);
            publishers.add(publisher);
            publisherConnections.add(connection);
        }

        try (ClientLoops loops = new ClientLoops(options.threads(), options.subscriberThreads())) {
            Run run = new Run(runId, topology, stats, loops.transport());
            progress.printf(Locale.ROOT, "fleetmq-bench %s: %s, MQTT %s, QoS %d against %s:%d (%s, %d threads)%n",
                    runId, options.scenario().label(), options.protocol().label(), options.qos(), options.host(),
                    options.port(), loops.transport(), options.threads());

            List<MqttConnection> everyone = new ArrayList<>(subscriberConnections);
            everyone.addAll(publisherConnections);
            try {
                String failure = connectAndSubscribe(loops, subscribers, subscriberConnections, publisherConnections,
                        qos);
                if (failure != null) {
                    return run.aborted(failure);
                }
                Phases phases = Phases.startingAt(System.nanoTime(), options.warmup(), options.duration());
                stats.begin(phases);
                if (series != null) {
                    series.begin(phases);
                }
                publishers.forEach(p -> p.start(phases));
                watch(phases, stats, series);
                CompletableFuture.allOf(publishers.stream().map(Publisher::stop).toArray(CompletableFuture[]::new))
                        .join();
                double drainSeconds = drain(stats, topology, qos);
                // Closed before the snapshot, so counters and histograms describe the same deliveries.
                closeAll(everyone);
                return run.completed(phases, drainSeconds, series == null ? List.of() : series.samples());
            } finally {
                closeAll(everyone); // again on the normal path: closing a closed connection is a no-op
            }
        }
    }

    /** Subscribers first, so that no publish finds its subscriber missing; null when all succeeded. */
    private String connectAndSubscribe(ClientLoops loops, List<Subscriber> subscribers,
                                       List<MqttConnection> subscriberConnections,
                                       List<MqttConnection> publisherConnections, MqttQoS qos) {
        int failed = connectAll(loops, subscriberConnections, options.subscriberPort(), true);
        if (failed > 0) {
            return failed + " of " + subscriberConnections.size() + " subscribers could not connect";
        }
        List<CompletableFuture<Void>> subscriptions = new ArrayList<>();
        for (int i = 0; i < subscribers.size(); i++) {
            subscriptions.add(subscriberConnections.get(i).subscribe(subscribers.get(i).spec().filter(), qos));
        }
        failed = awaitAll(subscriptions);
        if (failed > 0) {
            return failed + " of " + subscribers.size() + " subscriptions failed";
        }
        failed = connectAll(loops, publisherConnections, options.port(), false);
        if (failed > 0) {
            return failed + " of " + publisherConnections.size() + " publishers could not connect";
        }
        for (MqttConnection connection : publisherConnections) {
            if (connection.maximumQos() < qos.value()) {
                return "the broker supports QoS " + connection.maximumQos() + " at most (CONNACK Maximum QoS)";
            }
        }
        progress.printf("connected %d clients%n", subscriberConnections.size() + publisherConnections.size());
        return null;
    }

    /** Returns how many failed; each failure was already counted by its connection. */
    private int connectAll(ClientLoops loops, List<MqttConnection> connections, int port, boolean subscribers) {
        Semaphore permits = new Semaphore(CONNECT_CONCURRENCY);
        List<CompletableFuture<MqttConnection>> results = new ArrayList<>();
        for (MqttConnection connection : connections) {
            permits.acquireUninterruptibly();
            loops.connect(options.host(), port, connection, options.payloadBytes() + PACKET_HEADROOM, subscribers);
            results.add(connection.connected().whenComplete((c, e) -> permits.release()));
        }
        return awaitAll(results);
    }

    private static int awaitAll(List<? extends CompletableFuture<?>> futures) {
        // Every future ends on its own: connections and handshakes carry their own time-outs.
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
        return (int) futures.stream().filter(CompletableFuture::isCompletedExceptionally).count();
    }

    /**
     * Sleeps through warm-up and the measured window, printing one progress line per second, and
     * closing each interval of the soak series (null for none) as it ends.
     */
    private void watch(Phases phases, RunStats stats, SoakSeries series) {
        RunStats.Counts last = stats.counts();
        long lastAt = phases.start();
        while (true) {
            long now = System.nanoTime();
            if (series != null) {
                series.tick(now);
            }
            if (phases.isOver(now)) {
                return;
            }
            long next = Math.min(lastAt + PROGRESS_EVERY_NANOS, phases.measureTo());
            if (series != null && series.nextAt() - next < 0) {
                next = series.nextAt();
            }
            LockSupport.parkNanos(next - now);
            now = System.nanoTime();
            if (now - lastAt >= PROGRESS_EVERY_NANOS) {
                RunStats.Counts c = stats.counts();
                double seconds = (now - lastAt) / 1e9;
                progress.printf(Locale.ROOT, "[%5.1f s] %-9s published %,12.0f/s  delivered %,12.0f/s  errors %d%n",
                        (now - phases.start()) / 1e9, phases.measures(lastAt) ? "measuring" : "warm-up",
                        (c.publishedTotal() - last.publishedTotal()) / seconds,
                        (c.deliveredTotal() - last.deliveredTotal()) / seconds, stats.errors().total());
                last = c;
                lastAt = now;
            }
        }
    }

    /**
     * Waits until every measured publish has all its deliveries and every QoS 1/2 publish its
     * acknowledgement, or nothing moved for {@link #DRAIN_IDLE}, or the drain limit passed.
     * Returns the seconds waited.
     */
    private double drain(RunStats stats, Topology topology, MqttQoS qos) {
        long start = System.nanoTime();
        long deadline = start + options.drain().toNanos();
        long lastMovement = start;
        RunStats.Counts last = stats.counts();
        while (true) {
            long now = System.nanoTime();
            RunStats.Counts c = stats.counts();
            boolean allDelivered = c.deliveredMeasured() >= c.publishedMeasured() * topology.deliveriesPerPublish();
            boolean allAcknowledged = qos == MqttQoS.AT_MOST_ONCE || unacknowledged(c, stats) <= 0;
            if (allDelivered && allAcknowledged) {
                break;
            }
            if (c.deliveredTotal() != last.deliveredTotal() || c.acknowledgedTotal() != last.acknowledgedTotal()) {
                lastMovement = now;
                last = c;
            }
            if (now - lastMovement >= DRAIN_IDLE.toNanos() || now - deadline >= 0) {
                break;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return (System.nanoTime() - start) / 1e9;
    }

    private long unacknowledged(RunStats.Counts c, RunStats stats) {
        if (options.qos() == 0) {
            return 0;
        }
        return c.publishedTotal() - c.acknowledgedTotal()
                - stats.errors().summary().count(ErrorKind.PUBLISH_REJECTED);
    }

    private static void closeAll(List<MqttConnection> connections) {
        List<CompletableFuture<Void>> closed = new ArrayList<>();
        for (MqttConnection connection : connections) {
            closed.add(connection.close());
        }
        try {
            CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new))
                    .get(CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // The event loops shut down next and close whatever is left; the report is already complete.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Builds the report from what one run knows; a small helper to keep {@link #run()} readable. */
    private final class Run {
        private final String runId;
        private final Topology topology;
        private final RunStats stats;
        private final String transport;

        Run(String runId, Topology topology, RunStats stats, String transport) {
            this.runId = runId;
            this.topology = topology;
            this.stats = stats;
            this.transport = transport;
        }

        BenchReport aborted(String why) {
            return new BenchReport(options, runId, transport, BenchReport.Status.ABORTED, why,
                    topology.publishers().size(), topology.subscribers().size(), topology.deliveriesPerPublish(),
                    0, 0, 0, 0, 0, 0, 0, 0, LatencySummary.EMPTY, LatencySummary.EMPTY, stats.errors().summary());
        }

        BenchReport completed(Phases phases, double drainSeconds, List<IntervalSample> series) {
            RunStats.Counts c = stats.counts();
            return new BenchReport(options, runId, transport, BenchReport.Status.COMPLETED, "",
                    topology.publishers().size(), topology.subscribers().size(), topology.deliveriesPerPublish(),
                    phases.measuredSeconds(), drainSeconds,
                    c.publishedMeasured(), c.publishedMeasured() * topology.deliveriesPerPublish(),
                    c.deliveredMeasured(), c.arrivalsInWindow(), c.reordered(), unacknowledged(c, stats),
                    LatencySummary.of(stats.takeEndToEnd()), LatencySummary.of(stats.takeAcknowledgement()),
                    stats.errors().summary(), series);
        }
    }
}
