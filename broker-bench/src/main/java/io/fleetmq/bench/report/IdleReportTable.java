package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.probe.GeneratorUsage;
import io.fleetmq.bench.probe.ResourceSample;

/** The idle scenario's report, as a table like {@link ReportTable}'s and as one JSON line like {@link JsonReport}'s. */
public final class IdleReportTable {

    private IdleReportTable() {
    }

    public static String render(IdleReport r) {
        BenchOptions o = r.options();
        FleetCounts c = r.counts();
        StringBuilder out = new StringBuilder();
        FleetTables.line(out, "idle, MQTT %s, QoS %d: %s devices, %s, broker %s:%s%s", o.protocol().label(), o.qos(),
                Units.count(o.clients()), o.credentials().describe(), o.host(), FleetTables.ports(o),
                FleetTables.sources(o));
        FleetTables.line(out, "%s; %s; held %s; client %d %s thread(s), run %s", FleetTables.keepAlive(o.fleet()),
                FleetTables.ramp(o.fleet()), FleetTables.seconds(r.holdSeconds()), o.threads(), r.transport(), r.runId());
        FleetTables.line(out, "");
        FleetTables.line(out, "%-48s %12s", "ramp", "count");
        FleetTables.row(out, "devices started", c.attempts());
        FleetTables.row(out, "established (CONNACK 0)", c.accepted(),
                String.format(java.util.Locale.ROOT, "%s connects/s over %s", Units.count(r.connectsPerSecond()),
                        FleetTables.seconds(r.rampSeconds())));
        FleetTables.row(out, "subscribed (SUBACK)", c.served());
        FleetTables.row(out, "failed", c.failures());
        FleetTables.reasons(out, "  ", c.failuresByReason());
        FleetTables.line(out, "");
        FleetTables.line(out, "%-48s %12s", "hold", "count");
        FleetTables.row(out, "held after the ramp", r.heldAfterRamp());
        FleetTables.row(out, "lost while ramping", r.lostWhileRamping());
        FleetTables.row(out, "lost during the hold", r.lostDuringHold());
        FleetTables.reasons(out, "  ", c.lossesByReason());
        FleetTables.row(out, "held at the end", r.heldAtEnd());
        FleetTables.row(out, "PINGRESPs received", c.pings());
        if (c.messages() > 0) {
            FleetTables.row(out, "messages received", c.messages());
        }
        FleetTables.line(out, "");
        FleetTables.line(out, "%-22s %14s %14s %16s", "memory", "before", "after", "per connection");
        ResourceSample b = r.brokerBefore();
        ResourceSample a = r.brokerAfter();
        if (o.probes().metricsUrl() != null) {
            memoryRow(out, "broker heap", b.heapBytes(), a.heapBytes(), r.heapPerConnection());
            memoryRow(out, "broker direct", b.directBytes(), a.directBytes(), r.directPerConnection());
        }
        if (o.probes().brokerPid() > 0) {
            memoryRow(out, "broker RSS", b.rssBytes(), a.rssBytes(), r.rssPerConnection());
        }
        GeneratorUsage gb = r.generatorBefore();
        GeneratorUsage ga = r.generatorAfter();
        memoryRow(out, "generator heap (GC'd)", gb.heapBytes(), ga.heapBytes(), r.generatorHeapPerConnection());
        memoryRow(out, "generator RSS", gb.rssBytes(), ga.rssBytes(),
                ResourceSample.perEach(gb.rssBytes(), ga.rssBytes(), r.heldAfterRamp()));
        FleetTables.line(out, "generator threads: %d before, %d after the ramp (%d event loops)", gb.threads(),
                ga.threads(), o.threads());
        if (!r.probeSources().isEmpty()) {
            FleetTables.line(out, "broker figures: %s; sampled before the first connect and after the last handshake,"
                    + " no GC forced", r.probeSources());
        }
        FleetTables.line(out, "");
        if (r.clean()) {
            FleetTables.line(out, "result: all %s devices served and held, none lost", Units.count(o.clients()));
        } else {
            FleetTables.line(out, "result: %s of %s devices served, %s failed, %s lost", Units.count(c.served()),
                    Units.count(o.clients()), Units.count(c.failures()), Units.count(c.lost()));
        }
        FleetTables.samples(out, "first failures and losses:", c, c.failures() + c.lost());
        return out.toString();
    }

    private static void memoryRow(StringBuilder out, String name, long before, long after, double perConnection) {
        FleetTables.line(out, "  %-20s %14s %14s %16s", name, Units.sampledBytes(before), Units.sampledBytes(after),
                Units.bytes(perConnection));
    }

    /** Memory in bytes (null when unknown), times in seconds, rates per second. */
    public static String json(IdleReport r) {
        BenchOptions o = r.options();
        ResourceSample b = r.brokerBefore();
        ResourceSample a = r.brokerAfter();
        Json broker = new Json()
                .optional("heap_before", b.heapBytes()).optional("heap_after", a.heapBytes())
                .field("heap_per_connection", r.heapPerConnection())
                .optional("direct_before", b.directBytes()).optional("direct_after", a.directBytes())
                .field("direct_per_connection", r.directPerConnection())
                .optional("rss_before", b.rssBytes()).optional("rss_after", a.rssBytes())
                .field("rss_per_connection", r.rssPerConnection())
                .field("sources", r.probeSources());
        Json generator = new Json()
                .field("threads_before", r.generatorBefore().threads())
                .field("threads_after", r.generatorAfter().threads())
                .optional("heap_before", r.generatorBefore().heapBytes())
                .optional("heap_after", r.generatorAfter().heapBytes())
                .field("heap_per_connection", r.generatorHeapPerConnection())
                .optional("rss_after", r.generatorAfter().rssBytes());
        return new Json()
                .field("tool", "fleetmq-bench")
                .field("run_id", r.runId())
                .field("status", "completed")
                .field("scenario", o.scenario().label())
                .field("protocol", o.protocol().label())
                .field("qos", o.qos())
                .field("host", o.host())
                .numbers("ports", o.ports())
                .field("source_addresses", FleetTables.addresses(o.fleet()))
                .field("clients", o.clients())
                .field("keepalive_s", o.fleet().keepAliveSeconds())
                .field("subscriptions_per_client", o.fleet().subscriptions())
                .field("connect_rate", o.fleet().connectRate())
                .field("connect_concurrency", o.fleet().connectConcurrency())
                .field("credentials", o.credentials().describe())
                .field("threads", o.threads())
                .field("transport", r.transport())
                .field("ramp_s", r.rampSeconds())
                .field("connects_per_s", r.connectsPerSecond())
                .field("hold_s", r.holdSeconds())
                .field("held_after_ramp", r.heldAfterRamp())
                .field("lost_while_ramping", r.lostWhileRamping())
                .field("lost_during_hold", r.lostDuringHold())
                .field("held_at_end", r.heldAtEnd())
                .field("counts", FleetTables.counts(r.counts()))
                .field("broker", broker)
                .field("generator", generator)
                .field("clean", r.clean())
                .field("samples", r.counts().samples())
                .toString();
    }
}
