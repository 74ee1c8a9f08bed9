package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.cli.FleetOptions;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** Pieces the idle and storm tables and JSON lines share. */
final class FleetTables {

    private FleetTables() {
    }

    static String ports(BenchOptions o) {
        return o.ports().stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    /** {@code from 3 source addresses}, or nothing when the kernel chose. */
    static String sources(BenchOptions o) {
        int n = o.fleet().sourceAddresses().size();
        return n == 0 ? "" : n == 1 ? " from " + o.fleet().sourceAddresses().get(0).getHostAddress()
                : " from " + n + " source addresses";
    }

    static String ramp(FleetOptions f) {
        return (f.connectRate() == 0 ? "connect rate unlimited" : "at most " + Units.count(f.connectRate()) + " connects/s")
                + ", at most " + Units.count(f.connectConcurrency()) + " handshakes open";
    }

    static String keepAlive(FleetOptions f) {
        return (f.keepAliveSeconds() == 0 ? "keep-alive off" : "keep-alive " + f.keepAliveSeconds() + " s")
                + (f.subscriptions() == 1 ? "" : "; " + f.subscriptions() + " subscriptions per device");
    }

    /** Rows {@code   REASON   COUNT} of a tally, most frequent first. */
    static void reasons(StringBuilder out, String indent, Map<String, Long> counts) {
        for (Map.Entry<String, Long> e : FleetCounts.byCount(counts)) {
            row(out, indent + e.getKey(), e.getValue());
        }
    }

    static void samples(StringBuilder out, String heading, FleetCounts counts, long total) {
        if (counts.samples().isEmpty()) {
            return;
        }
        line(out, "");
        line(out, heading);
        for (String sample : counts.samples()) {
            line(out, "  %s", sample);
        }
        if (counts.samples().size() < total) {
            line(out, "  (first %d shown)", counts.samples().size());
        }
    }

    static void row(StringBuilder out, String name, long count) {
        line(out, "%-48s %12s", "  " + name, Units.count(count));
    }

    static void row(StringBuilder out, String name, long count, String note) {
        line(out, "%-48s %12s  %s", "  " + name, Units.count(count), note);
    }

    /** The counts of one phase as a JSON object. */
    static Json counts(FleetCounts c) {
        Json kinds = new Json();
        for (FailureKind kind : FailureKind.values()) {
            kinds.field(kind.key(), c.failures(kind));
        }
        kinds.field("total", c.failures());
        Json refused = new Json();
        c.refusedByCodeSorted().forEach((code, n) -> refused.field(ConnAckCodes.hex(code), n));
        Json reasons = new Json();
        FleetCounts.byCount(c.failuresByReason()).forEach(e -> reasons.field(e.getKey(), e.getValue()));
        Json losses = new Json();
        FleetCounts.byCount(c.lossesByReason()).forEach(e -> losses.field(e.getKey(), e.getValue()));
        return new Json()
                .field("attempts", c.attempts())
                .field("connack_accepted", c.accepted())
                .field("served", c.served())
                .field("session_present", c.sessionPresent())
                .field("refused_by_code", refused)
                .field("failures", kinds)
                .field("failures_by_reason", reasons)
                .field("lost", c.lost())
                .field("losses_by_reason", losses)
                .field("pingresps", c.pings())
                .field("messages", c.messages());
    }

    static List<String> addresses(FleetOptions f) {
        return f.sourceAddresses().stream().map(a -> a.getHostAddress()).toList();
    }

    static String seconds(double s) {
        return String.format(Locale.ROOT, "%.1f s", s);
    }

    static void line(StringBuilder out, String format, Object... args) {
        out.append(String.format(Locale.ROOT, format, args)).append('\n');
    }
}
