package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import java.util.Locale;
import java.util.Map;

/** The connect scenario's report, as a table like {@link ReportTable}'s and as one JSON line like {@link JsonReport}'s. */
public final class ConnectReportTable {

    private ConnectReportTable() {
    }

    public static String render(ConnectReport r) {
        BenchOptions o = r.options();
        StringBuilder out = new StringBuilder();
        line(out, "connect, MQTT %s: %d connectors, %s, broker %s:%d%s",
                o.protocol().label(), o.clients(), o.credentials().describe(), o.host(), o.port(),
                o.tls() == null ? "" : " over " + o.tls().describe());
        line(out, "each: TCP, CONNECT (clean start), CONNACK, DISCONNECT, close, again; warm-up %s, measured %s;"
                        + " client %d %s thread(s), run %s",
                seconds(o.warmup().toNanos() / 1e9), seconds(r.measuredSeconds()), o.threads(), r.transport(),
                r.runId());
        line(out, "");
        line(out, "%-34s %14s %14s", "CONNACKs in the window", "per second", "count");
        line(out, "  %-32s %14s %14s", "accepted", Units.count(r.acceptedPerSecond()), Units.count(r.accepted()));
        line(out, "  %-32s %14s %14s", "refused", Units.count(r.refusedPerSecond()), Units.count(r.refused()));
        for (Map.Entry<Integer, Long> e : r.refusedByCodeSorted().entrySet()) {
            line(out, "    %-30s %14s %14s", ConnAckCodes.describe(o.protocol(), e.getKey()),
                    Units.count(e.getValue() / r.measuredSeconds()), Units.count(e.getValue()));
        }
        line(out, "");
        line(out, "%-16s %10s %10s %10s %10s %10s %10s %12s",
                "CONNACK latency", "p50", "p90", "p99", "p99.9", "max", "mean", "samples");
        latencyRow(out, "accepted", r.acceptedLatency());
        if (r.refused() > 0) {
            latencyRow(out, "refused", r.refusedLatency());
        }
        line(out, "");
        ErrorSummary errors = r.errors();
        if (errors.total() == 0) {
            line(out, "errors: none");
        } else {
            StringBuilder counts = new StringBuilder();
            for (ErrorKind kind : ErrorKind.values()) {
                if (errors.count(kind) > 0) {
                    counts.append(counts.length() == 0 ? "" : ", ")
                            .append(kind.label()).append(' ').append(Units.count(errors.count(kind)));
                }
            }
            line(out, "errors: %s", counts);
            for (String sample : errors.samples()) {
                line(out, "  %s", sample);
            }
            if (errors.samples().size() < errors.total()) {
                line(out, "  (first %d shown)", errors.samples().size());
            }
        }
        return out.toString();
    }

    /** Latencies in microseconds with one decimal, rates per second, as in {@link JsonReport}. */
    public static String json(ConnectReport r) {
        BenchOptions o = r.options();
        Json refused = new Json();
        r.refusedByCodeSorted().forEach((code, n) -> refused.field(ConnAckCodes.hex(code), n));
        Json errors = new Json();
        for (ErrorKind kind : ErrorKind.values()) {
            errors.field(kind.key(), r.errors().count(kind));
        }
        errors.field("total", r.errors().total());
        return new Json()
                .field("tool", "fleetmq-bench")
                .field("run_id", r.runId())
                .field("status", "completed")
                .field("scenario", o.scenario().label())
                .field("protocol", o.protocol().label())
                .field("host", o.host())
                .field("port", o.port())
                .field("clients", o.clients())
                .field("credentials", o.credentials().describe())
                .field("tls", o.tls() == null ? "none" : o.tls().describe())
                .field("threads", o.threads())
                .field("transport", r.transport())
                .field("warmup_s", o.warmup().toMillis() / 1e3)
                .field("measured_s", r.measuredSeconds())
                .field("accepted_per_s", r.acceptedPerSecond())
                .field("refused_per_s", r.refusedPerSecond())
                .field("accepted", r.accepted())
                .field("refused", r.refused())
                .field("refused_by_code", refused)
                .field("connack_latency_us", JsonReport.latency(r.acceptedLatency()))
                .field("refused_connack_latency_us", JsonReport.latency(r.refusedLatency()))
                .field("errors", errors)
                .field("error_samples", r.errors().samples())
                .toString();
    }

    private static void latencyRow(StringBuilder out, String name, LatencySummary s) {
        if (s.count() == 0) {
            line(out, "%-16s %10s", name, "no samples");
            return;
        }
        line(out, "%-16s %10s %10s %10s %10s %10s %10s %12s", name,
                Units.duration(s.p50()), Units.duration(s.p90()), Units.duration(s.p99()),
                Units.duration(s.p999()), Units.duration(s.max()), Units.duration(s.mean()), Units.count(s.count()));
    }

    private static String seconds(double s) {
        return String.format(Locale.ROOT, "%.1f s", s);
    }

    private static void line(StringBuilder out, String format, Object... args) {
        out.append(String.format(Locale.ROOT, format, args)).append('\n');
    }
}
