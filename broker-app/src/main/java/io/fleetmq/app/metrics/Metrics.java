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
 * {@code node}, so a cluster's nodes can be told apart after aggregation.
 */
public final class Metrics implements AutoCloseable {

    private final PrometheusMeterRegistry registry;
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final JvmHeapPressureMetrics heapPressure = new JvmHeapPressureMetrics();

    public Metrics(String nodeId) {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().commonTags("node", nodeId);
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
