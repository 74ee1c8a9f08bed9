package io.fleetmq.app.metrics;

import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmHeapPressureMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * The node's meter registry, scraped at {@code /metrics}. Every meter carries the node's id as tag
 * {@code node}, so a cluster's nodes can be told apart after aggregation. No label may carry a
 * client ID or an MQTT topic.
 */
public final class Metrics implements AutoCloseable {

    private final PrometheusMeterRegistry registry;
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final JvmHeapPressureMetrics heapPressure = new JvmHeapPressureMetrics();

    public Metrics(String nodeId) {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().commonTags("node", nodeId);
        // Kafka's per-topic client metrics would name APPLICATION backlog topics, which carry client
        // IDs and topic filters: only the clients' totals (and per Kafka broker) are exported.
        registry.config().meterFilter(io.micrometer.core.instrument.config.MeterFilter.deny(
                id -> id.getName().startsWith("kafka.") && id.getTag("topic") != null));
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        gc.bindTo(registry);
        heapPressure.bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text exposition of every meter. */
    public String scrape() {
        return registry.scrape();
    }

    @Override
    public void close() {
        gc.close();
        heapPressure.close();
        registry.close();
    }
}
