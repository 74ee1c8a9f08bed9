package io.fleetmq.bench.fleet;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.ClientLoops;
import io.fleetmq.bench.probe.BrokerProbe;
import io.fleetmq.bench.probe.GeneratorUsage;
import io.fleetmq.bench.probe.ResourceSample;
import io.fleetmq.bench.report.IdleReport;
import io.fleetmq.bench.scenario.Scenario;
import java.io.PrintStream;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The idle scenario: bring up {@code --clients} devices (connect, subscribe), sample the broker's
 * memory before and after, hold them for {@code --duration} while they ping, then disconnect them all.
 * The broker's cost per connection is the difference of the samples divided by the connections held.
 */
public final class IdleRun {

    private static final long HOLD_PROGRESS_EVERY_NANOS = TimeUnit.SECONDS.toNanos(5);
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final BenchOptions options;
    private final PrintStream progress;

    /** @param progress where progress lines go while the run lasts (stderr on the command line) */
    public IdleRun(BenchOptions options, PrintStream progress) {
        if (options.scenario() != Scenario.IDLE) {
            throw new IllegalArgumentException("not an idle run: " + options.scenario().label());
        }
        this.options = options;
        this.progress = progress;
    }

    public IdleReport run() {
        String runId = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()).substring(2);
        FleetStats stats = new FleetStats();
        BrokerProbe probe = new BrokerProbe(options.probes(), progress);
        Ramp ramp = new Ramp(options.fleet().connectRate(), options.fleet().connectConcurrency(), progress);
        LongAdder lostWhileRamping = new LongAdder();
        LongAdder lostDuringHold = new LongAdder();
        AtomicBoolean holding = new AtomicBoolean();
        FleetEvents events = new FleetEvents() {
            @Override
            public void served(FleetClient client, boolean sessionPresent, long nanos) {
                ramp.handshakeOver(client);
            }

            @Override
            public void failed(FleetClient client, Failure failure, long nanos) {
                ramp.handshakeOver(client);
            }

            @Override
            public void lost(FleetClient client, String reason, long nanos) {
                (holding.get() ? lostDuringHold : lostWhileRamping).increment();
            }
        };
        try (ClientLoops loops = new ClientLoops(options.threads())) {
            Fleet fleet = new Fleet(options, runId, loops, events, stats);
            FleetClient[] devices = new FleetClient[options.clients()];
            for (int i = 0; i < devices.length; i++) {
                devices[i] = new FleetClient(fleet, i);
            }
            progress.printf(Locale.ROOT, "fleetmq-bench %s: idle, MQTT %s, QoS %d, %,d devices, %s against %s:%s"
                            + " (%s, %d threads)%n", runId, options.protocol().label(), options.qos(), options.clients(),
                    options.credentials().describe(), options.host(), Fleets.ports(options), loops.transport(),
                    options.threads());
            Fleets.warnAboutPorts(options, loops, progress);
            ResourceSample before = probe.sample();
            GeneratorUsage generatorBefore = Fleets.generatorAfterGc();

            ramp.run(devices, stats);

            ResourceSample after = probe.sample();
            GeneratorUsage generatorAfter = Fleets.generatorAfterGc();
            holding.set(true);
            long heldAfterRamp = stats.served.sum() - stats.lost.sum();
            progress.printf(Locale.ROOT, "holding %,d connections for %s%n", heldAfterRamp,
                    Fleets.seconds(options.duration()));
            double holdSeconds = hold(stats);
            long heldAtEnd = stats.served.sum() - stats.lost.sum();
            if (!Fleet.closeAll(devices, CLOSE_TIMEOUT)) {
                progress.println("some connections were still open " + CLOSE_TIMEOUT.toSeconds() + " s after closing");
            }
            return new IdleReport(options, runId, loops.transport(), probe.sources(), ramp.seconds(), holdSeconds,
                    stats.snapshot(), lostWhileRamping.sum(), lostDuringHold.sum(), heldAfterRamp, heldAtEnd, before,
                    after, generatorBefore, generatorAfter);
        }
    }

    /** Sleeps through the hold, one progress line every 5 s; returns the seconds held. */
    private double hold(FleetStats stats) {
        long start = System.nanoTime();
        long end = start + options.duration().toNanos();
        long lastAt = start;
        for (long now = start; end - now > 0; now = System.nanoTime()) {
            LockSupport.parkNanos(Math.min(end - now, lastAt + HOLD_PROGRESS_EVERY_NANOS - now));
            now = System.nanoTime();
            if (now - lastAt >= HOLD_PROGRESS_EVERY_NANOS) {
                progress.printf(Locale.ROOT, "[%5.1f s] holding %,d  lost %,d  PINGRESPs %,d%n", (now - start) / 1e9,
                        stats.served.sum() - stats.lost.sum(), stats.lost.sum(), stats.pings.sum());
                lastAt = now;
            }
        }
        return (System.nanoTime() - start) / 1e9;
    }
}
