package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.cli.FleetOptions;
import java.util.Map;

/** The storm scenario's report, as a table like {@link ReportTable}'s and as one JSON line like {@link JsonReport}'s. */
public final class StormReportTable {

    private StormReportTable() {
    }

    public static String render(StormReport r) {
        BenchOptions o = r.options();
        FleetOptions f = o.fleet();
        StringBuilder out = new StringBuilder();
        FleetTables.line(out, "storm, MQTT %s, QoS %d: %s devices, %s, broker %s:%s%s, %s", o.protocol().label(),
                o.qos(), Units.count(o.clients()), o.credentials().describe(), o.host(), FleetTables.ports(o),
                FleetTables.sources(o), sessions(o));
        FleetTables.line(out, "%s; %s; reconnect %s to another port; storm timeout %s; client %d %s thread(s), run %s",
                FleetTables.keepAlive(f), FleetTables.ramp(f), f.reconnectJitter().isZero() ? "at once"
                        : "after a random wait below " + Units.duration(f.reconnectJitter().toNanos()),
                FleetTables.seconds(f.stormTimeout().toNanos() / 1e9), o.threads(), r.transport(), r.runId());
        FleetTables.line(out, "");
        FleetCounts ramp = r.ramp();
        FleetTables.line(out, "ramp: %s of %s devices up in %s (%s connects/s)", Units.count(ramp.served() - ramp.lost()),
                Units.count(o.clients()), FleetTables.seconds(r.rampSeconds()), Units.count(r.connectsPerSecond()));
        if (r.status() == StormReport.Status.ABORTED) {
            FleetTables.reasons(out, "  ", ramp.failuresByReason());
            FleetTables.reasons(out, "  lost: ", ramp.lossesByReason());
            FleetTables.line(out, "");
            FleetTables.line(out, "ABORTED: %s", r.note());
            FleetTables.samples(out, "first failures and losses while ramping up:", ramp, ramp.failures() + ramp.lost());
            return out.toString();
        }
        if (!r.kill().isEmpty()) {
            FleetTables.line(out, "kill: %s", r.kill());
        }
        if (r.status() == StormReport.Status.NO_DROP) {
            FleetTables.line(out, "");
            FleetTables.line(out, "NO STORM: %s", r.note());
            return out.toString();
        }
        FleetTables.line(out, "first drop %s after READY", FleetTables.seconds(r.waitedSeconds()));
        FleetTables.line(out, "");
        FleetCounts s = r.storm();
        FleetTables.line(out, "%-48s %12s", "storm", "count");
        FleetTables.row(out, "devices dropped", r.dropped());
        FleetTables.row(out, "drops (a device may drop again)", r.drops());
        FleetTables.reasons(out, "  ", s.lossesByReason());
        FleetTables.row(out, "back (CONNACK 0 + SUBACK, or session present)", r.back());
        FleetTables.row(out, "  with the session present", s.sessionPresent());
        FleetTables.row(out, "reconnect attempts", s.attempts());
        FleetTables.row(out, "retries (attempts after a failed one)", r.retries());
        FleetTables.row(out, "CONNACK refusals", s.failures(FailureKind.CONNACK_REFUSED));
        for (Map.Entry<Integer, Long> e : s.refusedByCodeSorted().entrySet()) {
            FleetTables.row(out, "  " + ConnAckCodes.describe(o.protocol(), e.getKey()), e.getValue());
        }
        FleetTables.row(out, "closed without any CONNACK", s.failures(FailureKind.CLOSED_BEFORE_CONNACK),
                "refused without a reason code");
        FleetTables.row(out, "TCP connect failed", s.failures(FailureKind.TCP_FAILED));
        FleetTables.row(out, "no CONNACK or SUBACK in time",
                s.failures(FailureKind.CONNACK_TIMEOUT) + s.failures(FailureKind.SUBACK_TIMEOUT));
        FleetTables.row(out, "SUBACK refused or closed before it",
                s.failures(FailureKind.SUBACK_REFUSED) + s.failures(FailureKind.CLOSED_BEFORE_SUBACK));
        if (s.failures(FailureKind.PROTOCOL_ERROR) > 0) {
            FleetTables.row(out, "protocol errors", s.failures(FailureKind.PROTOCOL_ERROR));
        }
        if (s.failures() > 0) {
            FleetTables.line(out, "  failed attempts by reason:");
            FleetTables.reasons(out, "    ", s.failuresByReason());
        }
        FleetTables.line(out, "");
        Recovery rec = r.recovery();
        FleetTables.line(out, "%-36s %10s %10s %10s %10s", "back again after the first drop", "50 %", "90 %", "99 %",
                "100 %");
        FleetTables.line(out, "%-36s %10s %10s %10s %10s", "", time(rec.p50()), time(rec.p90()), time(rec.p99()),
                time(rec.p100()));
        FleetTables.line(out, "");
        if (r.allBack()) {
            FleetTables.line(out, "result: all %s dropped devices back within %s (storm over after %s)",
                    Units.count(r.dropped()), FleetTables.seconds(f.stormTimeout().toNanos() / 1e9),
                    FleetTables.seconds(r.stormSeconds()));
        } else {
            FleetTables.line(out, "result: NOT ALL BACK: %s of %s dropped devices still out after %s",
                    Units.count(r.stillOut()), Units.count(r.dropped()),
                    FleetTables.seconds(f.stormTimeout().toNanos() / 1e9));
        }
        FleetTables.samples(out, "first failed reconnects:", s, s.failures());
        return out.toString();
    }

    private static String sessions(BenchOptions o) {
        return o.sessionExpiry() > 0 ? "session expiry " + o.sessionExpiry() + " s" : "clean sessions";
    }

    private static String time(long nanos) {
        return nanos == Recovery.NOT_REACHED ? "never" : Units.duration(nanos);
    }

    /** Times in milliseconds (null where a share never came back), counts as numbers. */
    public static String json(StormReport r) {
        BenchOptions o = r.options();
        FleetOptions f = o.fleet();
        Recovery rec = r.recovery();
        Json recovery = new Json()
                .field("p50", ms(rec.p50())).field("p90", ms(rec.p90())).field("p99", ms(rec.p99()))
                .field("p100", ms(rec.p100()));
        return new Json()
                .field("tool", "fleetmq-bench")
                .field("run_id", r.runId())
                .field("status", r.status().label())
                .field("note", r.note())
                .field("scenario", o.scenario().label())
                .field("protocol", o.protocol().label())
                .field("qos", o.qos())
                .field("host", o.host())
                .numbers("ports", o.ports())
                .field("source_addresses", FleetTables.addresses(f))
                .field("clients", o.clients())
                .field("session_expiry_s", o.sessionExpiry())
                .field("keepalive_s", f.keepAliveSeconds())
                .field("reconnect_jitter_ms", f.reconnectJitter().toNanos() / 1e6)
                .field("storm_timeout_s", f.stormTimeout().toNanos() / 1e9)
                .field("threads", o.threads())
                .field("transport", r.transport())
                .field("ramp_s", r.rampSeconds())
                .field("connects_per_s", r.connectsPerSecond())
                .field("ramp", FleetTables.counts(r.ramp()))
                .field("kill", r.kill())
                .field("first_drop_after_ready_s", r.waitedSeconds())
                .field("dropped", r.dropped())
                .field("drops", r.drops())
                .field("back", r.back())
                .field("still_out", r.stillOut())
                .field("retries", r.retries())
                .field("closed_without_connack", r.storm().failures(FailureKind.CLOSED_BEFORE_CONNACK))
                .field("storm", FleetTables.counts(r.storm()))
                .field("back_after_first_drop_ms", recovery)
                .field("storm_s", r.stormSeconds())
                .field("all_back", r.allBack())
                .field("samples", r.status() == StormReport.Status.ABORTED ? r.ramp().samples() : r.storm().samples())
                .toString();
    }

    private static double ms(long nanos) {
        return nanos == Recovery.NOT_REACHED ? Double.NaN : nanos / 1e6;
    }
}
