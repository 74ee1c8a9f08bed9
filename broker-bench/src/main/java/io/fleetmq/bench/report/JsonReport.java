package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;

/**
 * The one-line JSON form of a report, for scripts: {@code ... | grep '^{' | jq .}. Latencies are in
 * microseconds with one decimal; rates are per second.
 */
public final class JsonReport {

    private JsonReport() {
    }

    public static String line(BenchReport r) {
        BenchOptions o = r.options();
        Json errors = new Json();
        for (ErrorKind kind : ErrorKind.values()) {
            errors.field(kind.key(), r.errors().count(kind));
        }
        errors.field("total", r.errors().total());
        Json line = new Json()
                .field("tool", "fleetmq-bench")
                .field("run_id", r.runId())
                .field("status", r.status().label())
                .field("note", r.note())
                .field("scenario", o.scenario().label())
                .field("protocol", o.protocol().label())
                .field("qos", o.qos())
                .field("host", o.host())
                .field("port", o.port())
                .field("clients", o.clients())
                .field("publishers", r.publishers())
                .field("subscribers", r.subscribers())
                .field("deliveries_per_publish", r.deliveriesPerPublish())
                .field("payload_bytes", o.payloadBytes())
                .field("target_rate", o.rate())
                .field("inflight", o.inflight())
                .field("threads", o.threads())
                .field("subscriber_threads", o.subscriberThreads())
                .field("transport", r.transport())
                .field("warmup_s", o.warmup().toMillis() / 1e3)
                .field("measured_s", r.measuredSeconds())
                .field("drain_s", r.drainSeconds())
                .field("published_per_s", r.publishedPerSecond())
                .field("delivered_per_s", r.deliveredPerSecond())
                .field("published", r.published())
                .field("expected_deliveries", r.expectedDeliveries())
                .field("delivered", r.delivered())
                .field("lost", r.lost())
                .field("reordered", r.reordered())
                .field("unacknowledged", r.unacknowledged())
                .field("latency_us", latency(r.endToEnd()))
                .field("ack_latency_us", o.qos() == 0 ? null : latency(r.acknowledgement()))
                .field("errors", errors)
                .field("error_samples", r.errors().samples());
        if (o.probes().series()) {
            line.objects("series", r.series().stream().map(JsonReport::interval).toList());
        }
        return line.toString();
    }

    /** One interval: rates per second, latency in microseconds (null without deliveries), memory in bytes (null unknown). */
    static Json interval(IntervalSample s) {
        boolean any = s.latency().count() > 0;
        return new Json()
                .field("t_s", s.endSeconds())
                .field("interval_s", s.seconds())
                .field("published_per_s", s.publishedPerSecond())
                .field("delivered_per_s", s.deliveredPerSecond())
                .field("p50_us", any ? s.latency().p50() / 1e3 : Double.NaN)
                .field("p99_us", any ? s.latency().p99() / 1e3 : Double.NaN)
                .field("samples", s.latency().count())
                .optional("broker_heap_bytes", s.broker().heapBytes())
                .optional("broker_direct_bytes", s.broker().directBytes())
                .optional("broker_rss_bytes", s.broker().rssBytes());
    }

    static Json latency(LatencySummary s) {
        return new Json()
                .field("count", s.count())
                .field("p50", s.p50() / 1e3)
                .field("p90", s.p90() / 1e3)
                .field("p99", s.p99() / 1e3)
                .field("p99_9", s.p999() / 1e3)
                .field("max", s.max() / 1e3)
                .field("mean", s.mean() / 1e3);
    }
}
