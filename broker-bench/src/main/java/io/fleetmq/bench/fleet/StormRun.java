package io.fleetmq.bench.fleet;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.ClientLoops;
import io.fleetmq.bench.report.FleetCounts;
import io.fleetmq.bench.report.Recovery;
import io.fleetmq.bench.report.StormReport;
import io.fleetmq.bench.scenario.Scenario;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The storm scenario: bring the fleet up as idle does, print {@code READY}, and wait for the broker
 * to drop connections (a node stopped by the operator, or by the tool with {@code --kill-pid}). Each
 * dropped device reconnects at once, under its client ID, to another port of the list (another
 * node: the devices of one port spread evenly over the others, as behind a load balancer), and
 * subscribes again unless its session came back; a failed attempt moves on to the next port. The storm ends when every dropped device is served again and nothing has dropped for a
 * second, or at the storm timeout.
 *
 * <p>Reconnects are not held back by {@code --connect-rate} or {@code --connect-concurrency}: a real
 * fleet does not coordinate either, which is what makes it a storm.
 */
public final class StormRun {

    /** A storm is over only after this long without a new drop: a node's connections do not all close at once. */
    static final Duration SETTLE = Duration.ofSeconds(1);
    /**
     * After a failed attempt at every port in turn, a device waits this long before the next round,
     * so that a cluster with no node up is not hammered by a busy loop for the whole timeout.
     */
    static final Duration PAUSE_AFTER_FULL_ROUND = Duration.ofMillis(100);
    private static final long NO_DROP = Long.MIN_VALUE;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long PROGRESS_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long WAIT_PROGRESS_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final BenchOptions options;
    private final PrintStream progress;

    // Per device, written on event loops, read by the coordinator.
    private AtomicIntegerArray dropCount;
    private AtomicIntegerArray down;
    private AtomicLongArray backAt;
    private final AtomicInteger out = new AtomicInteger();
    private final LongAdder dropsTotal = new LongAdder();
    private final AtomicBoolean ready = new AtomicBoolean();
    /** {@link #NO_DROP} until the first drop; nanoTime() never returns exactly that in practice. */
    private final AtomicLong firstDropAt = new AtomicLong(NO_DROP);
    private volatile long lastDropAt;

    /** @param progress where READY and progress lines go (stderr on the command line) */
    public StormRun(BenchOptions options, PrintStream progress) {
        if (options.scenario() != Scenario.STORM) {
            throw new IllegalArgumentException("not a storm run: " + options.scenario().label());
        }
        this.options = options;
        this.progress = progress;
    }

    public StormReport run() {
        String runId = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()).substring(2);
        int clients = options.clients();
        dropCount = new AtomicIntegerArray(clients);
        down = new AtomicIntegerArray(clients);
        backAt = new AtomicLongArray(clients);
        FleetStats rampStats = new FleetStats();
        FleetStats stormStats = new FleetStats(false);
        Ramp ramp = new Ramp(options.fleet().connectRate(), options.fleet().connectConcurrency(), progress);
        try (ClientLoops loops = new ClientLoops(options.threads())) {
            Fleet fleet = new Fleet(options, runId, loops, new Events(ramp), rampStats);
            FleetClient[] devices = new FleetClient[clients];
            for (int i = 0; i < clients; i++) {
                devices[i] = new FleetClient(fleet, i);
            }
            progress.printf(Locale.ROOT, "fleetmq-bench %s: storm, MQTT %s, QoS %d, %,d devices, %s against %s:%s,"
                            + " %s (%s, %d threads)%n", runId, options.protocol().label(), options.qos(), clients,
                    options.credentials().describe(), options.host(), Fleets.ports(options),
                    options.sessionExpiry() > 0 ? "session expiry " + options.sessionExpiry() + " s" : "clean sessions",
                    loops.transport(), options.threads());
            Fleets.warnAboutPorts(options, loops, progress);
            Report report = new Report(runId, loops.transport());

            ramp.run(devices, rampStats);
            report.ramp(ramp.seconds(), rampStats.snapshot());
            if (report.rampCounts.served() != clients || report.rampCounts.lost() > 0) {
                Fleet.closeAll(devices, IdleRun.CLOSE_TIMEOUT);
                return report.aborted(String.format(Locale.ROOT, "only %,d of %,d devices came up and stayed"
                                + " (%,d failed, %,d lost): a storm needs the whole fleet", report.rampCounts.served()
                                - report.rampCounts.lost(), clients, report.rampCounts.failures(),
                        report.rampCounts.lost()));
            }

            fleet.stats(stormStats);
            ready.set(true);
            long readyAt = System.nanoTime();
            progress.printf(Locale.ROOT, "all %,d devices up after %.1f s%n", clients, ramp.seconds());
            progress.println("READY");
            progress.flush();

            boolean storm = awaitFirstDrop(readyAt, report);
            if (!storm) {
                Fleet.closeAll(devices, IdleRun.CLOSE_TIMEOUT);
                return report.noDrop(String.format(Locale.ROOT, "no connection was dropped within %s of READY",
                        Fleets.seconds(options.duration())), (System.nanoTime() - readyAt) / 1e9);
            }
            long first = firstDropAt.get();
            double waited = (first - readyAt) / 1e9;
            long end = awaitRecovery(first);
            Fleet.closeAll(devices, IdleRun.CLOSE_TIMEOUT);
            return report.completed(waited, (end - first) / 1e9, stormStats.snapshot(), first);
        }
    }

    /** Waits for the first drop, killing {@code --kill-pid} when it is due; false when none came. */
    private boolean awaitFirstDrop(long readyAt, Report report) {
        long killPid = options.fleet().killPid();
        boolean killDue = killPid > 0;
        long killAt = readyAt + options.fleet().killAfter().toNanos();
        long deadline = readyAt + options.duration().toNanos();
        long lastProgress = readyAt;
        while (firstDropAt.get() == NO_DROP) {
            long now = System.nanoTime();
            if (killDue && now - killAt >= 0) {
                killDue = false;
                report.kill = kill(killPid, (now - readyAt) / 1e9);
                report.killedAt = System.nanoTime();
                progress.println(report.kill);
            }
            if (now - deadline >= 0) {
                return false;
            }
            if (now - lastProgress >= WAIT_PROGRESS_EVERY_NANOS) {
                progress.printf(Locale.ROOT, "[%5.1f s after READY] waiting for drops%n", (now - readyAt) / 1e9);
                lastProgress = now;
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
        return true;
    }

    private String kill(long pid, double afterReady) {
        if (pid == ProcessHandle.current().pid()) {
            return "--kill-pid " + pid + " is this tool itself: nothing killed";
        }
        Optional<ProcessHandle> process = ProcessHandle.of(pid);
        if (process.isEmpty() || !process.get().isAlive()) {
            return String.format(Locale.ROOT, "no process %d to kill %.1f s after READY", pid, afterReady);
        }
        boolean asked = process.get().destroyForcibly();
        return String.format(Locale.ROOT, "%s pid %d %.1f s after READY", asked ? "SIGKILL to" : "could not kill",
                pid, afterReady);
    }

    /** Waits until every dropped device is back and nothing dropped for {@link #SETTLE}, or the timeout. */
    private long awaitRecovery(long first) {
        long timeout = first + options.fleet().stormTimeout().toNanos();
        long lastProgress = first;
        while (true) {
            long now = System.nanoTime();
            if (out.get() == 0 && now - lastDropAt >= SETTLE.toNanos()) {
                return now;
            }
            if (now - timeout >= 0) {
                return timeout;
            }
            if (now - lastProgress >= PROGRESS_EVERY_NANOS) {
                long devicesDropped = countDropped();
                progress.printf(Locale.ROOT, "[%5.1f s after the first drop] dropped %,d  back %,d  out %,d%n",
                        (now - first) / 1e9, devicesDropped, devicesDropped - out.get(), out.get());
                lastProgress = now;
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    private long countDropped() {
        long n = 0;
        for (int i = 0; i < dropCount.length(); i++) {
            if (dropCount.get(i) > 0) {
                n++;
            }
        }
        return n;
    }

    /**
     * Reconnects {@code device} to another port (see {@link FleetClient#nextPort}), after the jitter
     * and, after a full round of failures, a pause.
     */
    private void reconnect(FleetClient device, boolean dropped) {
        device.nextPort(dropped);
        long delay = 0;
        long jitter = options.fleet().reconnectJitter().toNanos();
        if (jitter > 0) {
            delay = ThreadLocalRandom.current().nextLong(jitter);
        }
        int failures = device.failuresInRow;
        if (failures > 0 && failures % options.ports().size() == 0) {
            delay += PAUSE_AFTER_FULL_ROUND.toNanos();
        }
        device.later(device::connect, delay);
    }

    /** The devices' events: counts are already taken by the connection; this tracks drops and comebacks. */
    private final class Events implements FleetEvents {
        private final Ramp ramp;

        Events(Ramp ramp) {
            this.ramp = ramp;
        }

        @Override
        public void served(FleetClient device, boolean sessionPresent, long nanos) {
            ramp.handshakeOver(device);
            if (down.compareAndSet(device.index, 1, 0)) {
                backAt.set(device.index, nanos);
                out.decrementAndGet();
            }
        }

        @Override
        public void failed(FleetClient device, Failure failure, long nanos) {
            ramp.handshakeOver(device);
            if (ready.get() && down.get(device.index) == 1) {
                reconnect(device, false);
            }
        }

        @Override
        public void lost(FleetClient device, String reason, long nanos) {
            if (!ready.get()) {
                return; // lost while ramping: the ramp's counts have it, and the run aborts
            }
            dropsTotal.increment();
            dropCount.incrementAndGet(device.index);
            if (down.compareAndSet(device.index, 0, 1)) {
                out.incrementAndGet();
            }
            lastDropAt = nanos;
            firstDropAt.compareAndSet(NO_DROP, nanos);
            reconnect(device, true);
        }
    }

    /** Collects the report's parts as the run goes. */
    private final class Report {
        private final String runId;
        private final String transport;
        private double rampSeconds;
        private FleetCounts rampCounts = FleetCounts.NONE;
        private String kill = "";
        private long killedAt;

        Report(String runId, String transport) {
            this.runId = runId;
            this.transport = transport;
        }

        void ramp(double seconds, FleetCounts counts) {
            this.rampSeconds = seconds;
            this.rampCounts = counts;
        }

        StormReport aborted(String why) {
            return new StormReport(options, runId, transport, StormReport.Status.ABORTED, why, rampSeconds, rampCounts,
                    kill, 0, 0, 0, 0, FleetCounts.NONE, Recovery.NONE, 0);
        }

        StormReport noDrop(String why, double waited) {
            return new StormReport(options, runId, transport, StormReport.Status.NO_DROP, why, rampSeconds, rampCounts,
                    kill, waited, 0, 0, 0, FleetCounts.NONE, Recovery.NONE, 0);
        }

        StormReport completed(double waited, double stormSeconds, FleetCounts storm, long first) {
            long timeout = options.fleet().stormTimeout().toNanos();
            long devicesDropped = 0;
            long[] back = new long[dropCount.length()];
            int backCount = 0;
            for (int i = 0; i < dropCount.length(); i++) {
                if (dropCount.get(i) == 0) {
                    continue;
                }
                devicesDropped++;
                long after = backAt.get(i) - first;
                if (down.get(i) == 0 && after >= 0 && after <= timeout) {
                    back[backCount++] = after;
                }
            }
            long[] times = Arrays.copyOf(back, backCount);
            String killNote = kill;
            if (killedAt != 0 && !kill.isEmpty()) {
                killNote += String.format(Locale.ROOT, "; first drop %.0f ms after the kill", (first - killedAt) / 1e6);
            }
            return new StormReport(options, runId, transport, StormReport.Status.COMPLETED, "", rampSeconds,
                    rampCounts, killNote, waited, devicesDropped, dropsTotal.sum(), backCount, storm,
                    Recovery.of(times, devicesDropped), stormSeconds);
        }
    }
}
