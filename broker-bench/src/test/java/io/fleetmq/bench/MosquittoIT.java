package io.fleetmq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.cli.OptionsParser;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.probe.ResourceSample;
import io.fleetmq.bench.report.IntervalSample;
import io.fleetmq.bench.report.JsonReport;
import io.fleetmq.bench.report.BenchReport;
import io.fleetmq.bench.report.ReportTable;
import io.fleetmq.bench.run.BenchmarkRun;
import io.fleetmq.bench.scenario.Scenario;
import io.fleetmq.bench.support.MosquittoProcess;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Tiny runs against a real broker, Debian's Mosquitto, when the machine has it; skipped otherwise.
 * At a gentle rate every publish must arrive exactly once and in order, and nothing may go wrong.
 * No timing is asserted: this checks the tool's accounting, not anyone's speed.
 */
class MosquittoIT {

    @TempDir
    static Path dir;
    private static MosquittoProcess mosquitto;

    @BeforeAll
    static void startMosquitto() throws Exception {
        if (MosquittoProcess.isInstalled()) {
            mosquitto = MosquittoProcess.start(dir);
        }
    }

    /** Per test rather than in {@code @BeforeAll}, so that the report lists each test as skipped. */
    @BeforeEach
    void requireMosquitto() {
        assumeTrue(mosquitto != null, MosquittoProcess.BINARY + " not installed; skipping");
    }

    @AfterAll
    static void stopMosquitto() {
        if (mosquitto != null) {
            mosquitto.close();
        }
    }

    @ParameterizedTest(name = "p2p, 2 pairs, MQTT {0}, QoS {1}")
    @CsvSource({"5, 0", "5, 1", "5, 2", "3.1.1, 0", "3.1.1, 1", "3.1.1, 2"})
    void everyPublishIsDeliveredOnceInOrderWithoutErrors(String protocol, int qos) throws Exception {
        BenchOptions options = new BenchOptions(Scenario.P2P, "127.0.0.1", mosquitto.port(), Protocol.parse(protocol),
                qos, 2, 200, Duration.ofMillis(300), Duration.ofSeconds(1), Duration.ofSeconds(5),
                BenchOptions.DEFAULT_PAYLOAD, BenchOptions.DEFAULT_INFLIGHT, 1);
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        BenchReport report = new BenchmarkRun(options, new PrintStream(progress, true, StandardCharsets.UTF_8)).run();
        String context = ReportTable.render(report) + progress.toString(StandardCharsets.UTF_8) + mosquitto.log();

        assertEquals(BenchReport.Status.COMPLETED, report.status(), context);
        assertEquals(0, report.errors().total(), context);
        assertTrue(report.published() > 0, context);
        assertEquals(report.published(), report.expectedDeliveries(), context);
        assertEquals(report.expectedDeliveries(), report.delivered(), context);
        assertEquals(0, report.lost(), context);
        assertEquals(0, report.reordered(), context);
        assertEquals(0, report.unacknowledged(), context);
        assertEquals(report.delivered(), report.endToEnd().count(), "one latency sample per delivery\n" + context);
        assertEquals(qos == 0 ? 0 : report.published(), report.acknowledgement().count(), context);
    }

    /**
     * A short soak run: one line per interval of the window, each with its own deliveries and latency
     * and Mosquitto's resident memory, and together they hold every delivery of the window.
     */
    @Test
    void reportEveryGivesOneSampleWithBrokerMemoryPerIntervalOfTheWindow() throws Exception {
        BenchOptions options = OptionsParser.parse("--scenario", "p2p", "--port", Integer.toString(mosquitto.port()),
                "--clients", "2", "--qos", "1", "--rate", "400", "--warmup", "300ms", "--duration", "1500ms",
                "--drain", "5s", "--threads", "1", "--report-every", "500ms", "--broker-pid",
                Long.toString(mosquitto.pid())).orElseThrow();
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        BenchReport report = new BenchmarkRun(options, new PrintStream(progress, true, StandardCharsets.UTF_8)).run();
        String context = ReportTable.render(report) + progress.toString(StandardCharsets.UTF_8);

        assertTrue(report.clean(), context);
        List<IntervalSample> series = report.series();
        assertEquals(3, series.size(), context);
        assertEquals(1.5, series.get(2).endSeconds(), 0.2, context);
        long delivered = 0;
        for (IntervalSample s : series) {
            assertTrue(s.delivered() > 0, context);
            assertTrue(s.latency().p99() >= s.latency().p50(), context);
            assertTrue(s.broker().rssBytes() > 0, context);
            assertEquals(ResourceSample.UNKNOWN, s.broker().heapBytes(), "no metrics URL given\n" + context);
            delivered += s.delivered();
        }
        // Arrivals in the window, give or take what arrived while the coordinator was late to open the
        // series or to close it (it looks in on its own thread), plus the deliveries in flight at the edges.
        IntervalSample first = series.get(0);
        IntervalSample last = series.get(series.size() - 1);
        double lateSeconds = Math.max(0, first.endSeconds() - first.seconds()) + Math.max(0, last.endSeconds() - 1.5);
        assertEquals(report.arrivalsInWindow(), delivered, 20 + 400 * lateSeconds, context);
        assertTrue(ReportTable.render(report).contains("time series, every 0.5 s of the measured window"), context);
        assertTrue(JsonReport.line(report).contains("\"series\":[{\"t_s\":"), context);
    }
}
