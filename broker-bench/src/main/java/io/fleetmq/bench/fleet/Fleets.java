package io.fleetmq.bench.fleet;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.ClientLoops;
import io.fleetmq.bench.probe.GeneratorUsage;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.stream.Collectors;

/** Small helpers the idle and storm runs share. */
final class Fleets {

    private Fleets() {
    }

    /** {@code 1883} or {@code 1883,1884}. */
    static String ports(BenchOptions options) {
        return options.ports().stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    static void warnAboutPorts(BenchOptions options, ClientLoops loops, PrintStream progress) {
        String warning = PortBudget.warning(options.clients(), options.fleet().sourceAddresses().size(),
                options.ports().size(), loops.transport().equals("epoll"), PortBudget.ephemeralPorts());
        if (warning != null) {
            progress.println(warning);
        }
    }

    /**
     * The generator's own usage after a collection of its own heap: its per-connection figure is then
     * live data, not garbage. (The broker's heap cannot be collected from here.)
     */
    static GeneratorUsage generatorAfterGc() {
        System.gc();
        return GeneratorUsage.now();
    }

    static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1f s", d.toNanos() / 1e9);
    }
}
