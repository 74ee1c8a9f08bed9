package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import java.util.Locale;

/** The human-readable report: what ran, throughput, delivery accounting, latency and every error. */
public final class ReportTable {

    private ReportTable() {
    }

    public static String render(BenchReport r) {
        BenchOptions o = r.options();
        StringBuilder out = new StringBuilder();
        line(out, "%s, MQTT %s, QoS %d: %s, %d-byte payload, broker %s:%d",
                o.scenario().label(), o.protocol().label(), o.qos(), shape(r), o.payloadBytes(), o.host(), o.port());
        line(out, "rate %s; warm-up %s, measured %s, drain %s; client %d %s thread(s), run %s",
                o.rate() == 0 ? "unlimited (in-flight window " + o.inflight() + " per publisher for QoS 1/2)"
                        : Units.count(o.rate()) + " msg/s target",
                seconds(o.warmup().toNanos() / 1e9), seconds(r.measuredSeconds()), seconds(r.drainSeconds()),
                o.threads(), r.transport(), r.runId());
        if (r.status() == BenchReport.Status.ABORTED) {
            line(out, "");
            line(out, "ABORTED: %s", r.note());
        } else {
            line(out, "");
            line(out, "%-34s %14s", "throughput", "msg/s");
            line(out, "  %-32s %14s", "published", Units.count(r.publishedPerSecond()));
            line(out, "  %-32s %14s", "delivered (arrivals in window)", Units.count(r.deliveredPerSecond()));
            line(out, "");
            line(out, "%-34s %14s", "messages published in the window", "count");
            line(out, "  %-32s %14s", "published", Units.count(r.published()));
            line(out, "  %-32s %14s", "expected deliveries (x" + r.deliveriesPerPublish() + ")",
                    Units.count(r.expectedDeliveries()));
            line(out, "  %-32s %14s", "delivered", Units.count(r.delivered()));
            line(out, "  %-32s %14s%s", "lost (undelivered after drain)", Units.count(r.lost()),
                    r.lost() < 0 ? "  (more deliveries than owed)" : "");
            line(out, "  %-32s %14s", "reordered or duplicated", Units.count(r.reordered()));
            if (o.qos() > 0) {
                line(out, "  %-32s %14s", "unacknowledged at the end", Units.count(r.unacknowledged()));
            }
            line(out, "");
            line(out, "%-16s %10s %10s %10s %10s %10s %10s %12s",
                    "latency", "p50", "p90", "p99", "p99.9", "max", "mean", "samples");
            latencyRow(out, "end-to-end", r.endToEnd());
            if (o.qos() > 0) {
                latencyRow(out, o.qos() == 1 ? "PUBACK" : "PUBCOMP", r.acknowledgement());
            }
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
        series(out, r);
        return out.toString();
    }

    /**
     * The soak time series after the table: one line per interval, rates and latency of the
     * deliveries that arrived in it, and the broker's memory at its end where a source was given.
     */
    static void series(StringBuilder out, BenchReport r) {
        if (r.series().isEmpty()) {
            return;
        }
        BenchOptions o = r.options();
        boolean metrics = o.probes().metricsUrl() != null;
        boolean rss = o.probes().brokerPid() > 0;
        line(out, "");
        line(out, "time series, every %s of the measured window (latency of the deliveries arriving in each):",
                seconds(o.probes().reportEvery().toNanos() / 1e9));
        StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%8s %14s %14s %10s %10s",
                "end", "published/s", "delivered/s", "p50", "p99"));
        if (metrics) {
            header.append(String.format(Locale.ROOT, " %13s %13s", "broker heap", "direct"));
        }
        if (rss) {
            header.append(String.format(Locale.ROOT, " %13s", "broker RSS"));
        }
        line(out, "%s", header);
        for (IntervalSample s : r.series()) {
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%8s %14s %14s %10s %10s",
                    seconds(s.endSeconds()), Units.count(s.publishedPerSecond()), Units.count(s.deliveredPerSecond()),
                    s.latency().count() == 0 ? "-" : Units.duration(s.latency().p50()),
                    s.latency().count() == 0 ? "-" : Units.duration(s.latency().p99())));
            if (metrics) {
                row.append(String.format(Locale.ROOT, " %13s %13s", Units.sampledBytes(s.broker().heapBytes()),
                        Units.sampledBytes(s.broker().directBytes())));
            }
            if (rss) {
                row.append(String.format(Locale.ROOT, " %13s", Units.sampledBytes(s.broker().rssBytes())));
            }
            line(out, "%s", row);
        }
    }

    private static String shape(BenchReport r) {
        return r.publishers() + (r.publishers() == 1 ? " publisher" : " publishers") + " -> "
                + r.subscribers() + (r.subscribers() == 1 ? " subscriber" : " subscribers");
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
