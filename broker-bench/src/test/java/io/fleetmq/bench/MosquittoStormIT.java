package io.fleetmq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fleetmq.bench.cli.OptionsParser;
import io.fleetmq.bench.cli.UsageException;
import io.fleetmq.bench.fleet.StormRun;
import io.fleetmq.bench.report.FailureKind;
import io.fleetmq.bench.report.Recovery;
import io.fleetmq.bench.report.StormReport;
import io.fleetmq.bench.report.StormReportTable;
import io.fleetmq.bench.scenario.Scenario;
import io.fleetmq.bench.support.MosquittoProcess;
import io.fleetmq.bench.support.TcpProxy;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storm scenario against Debian's Mosquitto, each test with brokers of its own: a node killed
 * by the tool whose devices all move to the other node; a lone node killed, so nobody comes back;
 * persistent sessions behind a dropped relay, which come back without subscribing again. Skipped
 * when the machine has no Mosquitto.
 */
class MosquittoStormIT {

    private static final Pattern CONNECTED = Pattern.compile("New client connected from \\S+ as (\\S+) ");

    @TempDir
    Path dirA;
    @TempDir
    Path dirB;

    @BeforeEach
    void requireMosquitto() {
        assumeTrue(MosquittoProcess.isInstalled(), MosquittoProcess.BINARY + " not installed; skipping");
    }

    private static StormReport storm(PrintStream progress, String... args) throws UsageException {
        return new StormRun(OptionsParser.parse(args).orElseThrow(), progress).run();
    }

    @Test
    void devicesOfAKilledNodeAllReconnectToTheOtherNode() throws Exception {
        int clients = 200;
        try (MosquittoProcess a = MosquittoProcess.start(dirA); MosquittoProcess b = MosquittoProcess.start(dirB)) {
            ByteArrayOutputStream progress = new ByteArrayOutputStream();
            StormReport report = storm(new PrintStream(progress, true, StandardCharsets.UTF_8), "--scenario", "storm",
                    "--port", a.port() + "," + b.port(), "--clients", Integer.toString(clients), "--qos", "1",
                    "--kill-pid", Long.toString(a.pid()), "--kill-after", "0s", "--duration", "20s",
                    "--storm-timeout", "20s", "--threads", "1");
            String context = StormReportTable.render(report) + progress.toString(StandardCharsets.UTF_8);

            assertFalse(a.isAlive(), "the tool killed node A\n" + context);
            assertTrue(progress.toString(StandardCharsets.UTF_8).contains("\nREADY\n"), context);
            assertEquals(StormReport.Status.COMPLETED, report.status(), context);
            assertEquals(clients, report.ramp().served(), context);
            assertTrue(report.kill().startsWith("SIGKILL to pid " + a.pid()), context);
            // Device i started on port i mod 2: the even half was on A.
            assertEquals(clients / 2, report.dropped(), context);
            assertEquals(clients / 2, report.drops(), context);
            assertEquals(clients / 2, report.back(), context);
            assertTrue(report.allBack(), context);
            assertEquals(0, report.stillOut(), context);
            assertEquals(clients / 2, report.storm().served(), "B had no sessions: each subscribed again\n" + context);
            assertEquals(0, report.storm().sessionPresent(), context);
            assertEquals(0, report.storm().failures(), "B was up all along\n" + context);
            assertEquals(0, report.retries(), context);
            Recovery r = report.recovery();
            assertTrue(0 <= r.p50() && r.p50() <= r.p90() && r.p90() <= r.p99() && r.p99() <= r.p100(), context);
            assertTrue(r.p100() <= TimeUnit.SECONDS.toNanos(20), context);

            Set<String> movedToB = new HashSet<>();
            Matcher m = CONNECTED.matcher(b.log());
            while (m.find()) {
                movedToB.add(m.group(1));
            }
            for (int i = 0; i < clients; i++) {
                assertTrue(movedToB.contains(Scenario.deviceId(report.runId(), i)), "B saw device " + i + "\n" + context);
            }
        }
    }

    @Test
    void withNoNodeLeftNobodyComesBackTheRetriesAreCountedAndTheRunFails() throws Exception {
        try (MosquittoProcess a = MosquittoProcess.start(dirA)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int status = Main.run(new String[] {"--scenario", "storm", "--port", Integer.toString(a.port()),
                            "--clients", "20", "--kill-pid", Long.toString(a.pid()), "--kill-after", "0s",
                            "--duration", "20s", "--storm-timeout", "1s", "--threads", "1"},
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
            String stdout = out.toString(StandardCharsets.UTF_8);
            String context = stdout + err.toString(StandardCharsets.UTF_8);

            assertEquals(Main.EXIT_ERRORS, status, context);
            assertTrue(stdout.contains("result: NOT ALL BACK: 20 of 20 dropped devices still out after 1.0 s\n"), context);
            assertTrue(stdout.contains("      TCP connect failed: Connection refused"), context);
            assertTrue(stdout.contains("\"dropped\":20,\"drops\":20,\"back\":0,\"still_out\":20,"), context);
            assertTrue(stdout.contains("\"back_after_first_drop_ms\":{\"p50\":null,\"p90\":null,\"p99\":null,\"p100\":null}"),
                    context);
            assertTrue(stdout.contains("\"all_back\":false"), context);
        }
    }

    @Test
    void aStormWithoutAnyDropIsReportedAsNone() throws Exception {
        try (MosquittoProcess a = MosquittoProcess.start(dirA)) {
            ByteArrayOutputStream progress = new ByteArrayOutputStream();
            StormReport report = storm(new PrintStream(progress, true, StandardCharsets.UTF_8), "--scenario", "storm",
                    "--port", Integer.toString(a.port()), "--clients", "10", "--duration", "300ms", "--threads", "1");
            String context = StormReportTable.render(report) + progress.toString(StandardCharsets.UTF_8);
            assertEquals(StormReport.Status.NO_DROP, report.status(), context);
            assertEquals(0, report.dropped(), context);
            assertFalse(report.allBack(), context);
            assertTrue(StormReportTable.render(report).contains("NO STORM: no connection was dropped within 0.3 s of READY"),
                    context);
        }
    }

    @Test
    void persistentSessionsDroppedByARelayComeBackWithoutSubscribingAgain() throws Exception {
        int clients = 40;
        try (MosquittoProcess broker = MosquittoProcess.start(dirA);
             TcpProxy first = TcpProxy.to(broker.port());
             TcpProxy second = TcpProxy.to(broker.port())) {
            ReadyWatch progress = new ReadyWatch();
            CompletableFuture<StormReport> run = CompletableFuture.supplyAsync(() -> {
                try {
                    return storm(new PrintStream(progress, true, StandardCharsets.UTF_8), "--scenario", "storm",
                            "--port", first.port() + "," + second.port(), "--clients", Integer.toString(clients),
                            "--qos", "1", "--session-expiry", "60", "--duration", "20s", "--storm-timeout", "20s",
                            "--threads", "1");
                } catch (UsageException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertTrue(progress.ready.await(20, TimeUnit.SECONDS), progress.text());
            first.close(); // devices 0, 2, 4 ... went through the first relay
            StormReport report = run.get(40, TimeUnit.SECONDS);
            String context = StormReportTable.render(report) + progress.text() + broker.log();

            assertEquals(StormReport.Status.COMPLETED, report.status(), context);
            assertEquals(clients / 2, report.dropped(), context);
            assertTrue(report.allBack(), context);
            assertEquals(clients / 2, report.storm().served(), context);
            assertEquals(clients / 2, report.storm().sessionPresent(),
                    "Mosquitto kept every session: no device subscribed again\n" + context);
            assertEquals(0, report.storm().failures(FailureKind.SUBACK_REFUSED), context);
            assertEquals(0, report.ramp().sessionPresent(), "the first connect starts clean\n" + context);
        }
    }

    /** Progress text, and a latch that opens on the READY line. */
    private static final class ReadyWatch extends OutputStream {
        final CountDownLatch ready = new CountDownLatch(1);
        private final StringBuffer text = new StringBuffer();

        @Override
        public void write(int b) {
            text.append((char) b);
            if (b == '\n' && text.toString().endsWith("\nREADY\n")) {
                ready.countDown();
            }
        }

        String text() {
            return text.toString();
        }
    }
}
