package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.cli.OptionsParser;
import io.fleetmq.bench.cli.UsageException;
import io.fleetmq.bench.probe.GeneratorUsage;
import io.fleetmq.bench.probe.ResourceSample;
import java.util.List;
import java.util.Map;

/** Sample idle and storm reports for the formatting tests. */
final class FleetReports {

    private FleetReports() {
    }

    static BenchOptions options(String... args) {
        try {
            return OptionsParser.parse(args).orElseThrow();
        } catch (UsageException e) {
            throw new IllegalArgumentException(e);
        }
    }

    static FleetCounts counts(long attempts, long accepted, long served, Map<Integer, Long> refused,
                              Map<FailureKind, Long> kinds, Map<String, Long> reasons, long lost,
                              Map<String, Long> losses, List<String> samples) {
        return new FleetCounts(attempts, accepted, served, 0, refused, kinds, reasons, lost, losses, 3_000, 0, samples);
    }

    /** 10,000 devices, 3 refused with 0x89, 2 without CONNACK, 1 lost in the hold; broker memory from both sources. */
    static IdleReport idle() {
        BenchOptions o = options("--scenario", "idle", "--clients", "10000", "--port", "11883", "--qos", "1",
                "--source-addresses", "127.0.0.1-127.0.0.3", "--connect-rate", "2000", "--threads", "2",
                "--metrics-url", "http://127.0.0.1:18083/metrics", "--broker-pid", "777", "--duration", "60s");
        FleetCounts c = counts(10_000, 9_997, 9_995, Map.of(0x89, 3L),
                Map.of(FailureKind.CONNACK_REFUSED, 3L, FailureKind.CLOSED_BEFORE_CONNACK, 2L),
                Map.of("CONNACK 0x89 server busy", 3L, "closed without any CONNACK", 2L), 1,
                Map.of("closed by the broker (DISCONNECT 0x8E)", 1L),
                List.of("babc123d17: CONNACK 0x89 server busy"));
        return new IdleReport(o, "abc123", "epoll",
                "heap jvm_memory_used_bytes, direct jvm_buffer_memory_used_bytes from http://127.0.0.1:18083/metrics;"
                        + " RSS of pid 777",
                5.0, 60.0, c, 0, 1, 9_995, 9_994,
                new ResourceSample(100L << 20, 8L << 20, 300L << 20),
                new ResourceSample((100L << 20) + 9_995L * 4096, 8L << 20, (300L << 20) + 9_995L * 10_240),
                new GeneratorUsage(6, 4L << 20, 50L << 20), new GeneratorUsage(8, (4L << 20) + 9_995L * 3072, 120L << 20));
    }

    static StormReport storm(long dropped, long back, Recovery recovery) {
        BenchOptions o = options("--scenario", "storm", "--clients", "1000", "--port", "1883,1884", "--qos", "1",
                "--kill-pid", "4321", "--kill-after", "1s", "--threads", "2");
        FleetCounts ramp = counts(1_000, 1_000, 1_000, Map.of(), Map.of(), Map.of(), 0, Map.of(), List.of());
        FleetCounts storm = counts(537, 510, 500, Map.of(0x89, 10L),
                Map.of(FailureKind.CONNACK_REFUSED, 10L, FailureKind.CLOSED_BEFORE_CONNACK, 20L,
                        FailureKind.TCP_FAILED, 7L),
                Map.of("CONNACK 0x89 server busy", 10L, "closed without any CONNACK", 20L,
                        "TCP connect failed: Connection refused", 7L), 500,
                Map.of("closed by the broker", 500L), List.of("babc123d1: TCP connect failed: Connection refused"));
        return new StormReport(o, "abc123", "epoll", StormReport.Status.COMPLETED, "", 0.8, ramp,
                "SIGKILL to pid 4321 1.0 s after READY; first drop 2 ms after the kill", 1.0, dropped, 500, back, storm,
                recovery, 1.6);
    }
}
