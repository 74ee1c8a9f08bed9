package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.cli.ProbeOptions;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.probe.ResourceSample;
import io.fleetmq.bench.scenario.Scenario;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Sample reports for the formatting tests. */
final class Reports {

    private Reports() {
    }

    static BenchReport completedFanOut() {
        BenchOptions options = new BenchOptions(Scenario.FAN_OUT, "127.0.0.1", 1883, Protocol.MQTT_5, 1, 100, 0,
                Duration.ofSeconds(5), Duration.ofSeconds(20), Duration.ofSeconds(10), 64, 16, 2);
        return new BenchReport(options, "abc123", "epoll", BenchReport.Status.COMPLETED, "", 1, 100, 100,
                20.0, 0.25, 20_000, 2_000_000, 1_999_990, 1_990_000, 0, 0,
                new LatencySummary(1_999_990, 812_000, 2_100_000, 9_500_000, 20_000_000, 31_000_000, 1_050_000),
                new LatencySummary(20_000, 400_000, 900_000, 3_000_000, 5_000_000, 6_000_000, 500_000),
                new ErrorSummary(Map.of(), List.of()));
    }

    static BenchReport abortedByRefusals() {
        BenchOptions options = BenchOptions.defaults(Scenario.P2P);
        return new BenchReport(options, "def456", "nio", BenchReport.Status.ABORTED,
                "2 of 2 subscribers could not connect", 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                LatencySummary.EMPTY, LatencySummary.EMPTY,
                new ErrorSummary(Map.of(ErrorKind.CONNECT_FAILED, 2L), List.of(
                        "connect failures: bdef456s0: CONNACK refused: \"server unavailable\" (0x88)",
                        "connect failures: bdef456s1: CONNACK refused: \"server unavailable\" (0x88)")));
    }

    /** The fan-out run as a soak run with two intervals, the second without deliveries and without broker figures. */
    static BenchReport withSeries(BenchReport r) {
        BenchOptions options = r.options().withProbes(new ProbeOptions(URI.create("http://127.0.0.1:18083/metrics"), 42,
                Duration.ofSeconds(30)));
        List<IntervalSample> series = List.of(
                new IntervalSample(30.0, 30.0, 30_000, 2_985_000,
                        new LatencySummary(2_985_000, 812_000, 2_100_000, 9_500_000, 20_000_000, 31_000_000, 1_050_000),
                        new ResourceSample(512L << 20, 16L << 20, 1L << 30)),
                new IntervalSample(45.0, 15.0, 7_500, 735_000, LatencySummary.EMPTY, ResourceSample.NONE));
        return new BenchReport(options, r.runId(), r.transport(), r.status(), r.note(), r.publishers(), r.subscribers(),
                r.deliveriesPerPublish(), r.measuredSeconds(), r.drainSeconds(), r.published(), r.expectedDeliveries(),
                r.delivered(), r.arrivalsInWindow(), r.reordered(), r.unacknowledged(), r.endToEnd(), r.acknowledgement(),
                r.errors(), series);
    }
}
