package io.fleetmq.bench.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Heap and direct memory are found by name prefix and label, whichever exporter wrote them. */
class PrometheusTextTest {

    /** What Micrometer's JvmMemoryMetrics writes (FleetMQ's /metrics), trimmed. */
    private static final String MICROMETER = """
            # HELP jvm_memory_used_bytes The amount of used memory
            # TYPE jvm_memory_used_bytes gauge
            jvm_memory_used_bytes{area="heap",id="G1 Eden Space",node="n1"} 1.048576E7
            jvm_memory_used_bytes{area="heap",id="G1 Old Gen",node="n1"} 2.097152E7
            jvm_memory_used_bytes{area="nonheap",id="Metaspace",node="n1"} 5.0E7
            jvm_memory_committed_bytes{area="heap",id="G1 Old Gen",node="n1"} 9.9E8
            # TYPE jvm_buffer_memory_used_bytes gauge
            jvm_buffer_memory_used_bytes{id="direct",node="n1"} 4194304.0
            jvm_buffer_memory_used_bytes{id="mapped",node="n1"} 1.0E9
            jvm_buffer_count_buffers{id="direct",node="n1"} 12.0
            jvm_buffer_total_capacity_bytes{id="direct",node="n1"} 8388608.0
            """;

    /** What the old Prometheus simpleclient hotspot exports write. */
    private static final String SIMPLECLIENT = """
            jvm_memory_bytes_used{area="heap",} 3.0E7
            jvm_memory_bytes_used{area="nonheap",} 4.0E7
            jvm_memory_pool_bytes_used{pool="G1 Eden Space",} 1.0E7
            jvm_buffer_pool_used_bytes{pool="direct",} 123456.0
            jvm_buffer_pool_used_buffers{pool="direct",} 7.0
            """;

    @Test
    void micrometerHeapIsTheSumOfTheHeapPoolsAndDirectIsTheDirectBufferPool() {
        List<PrometheusText.Series> series = PrometheusText.parse(MICROMETER);
        assertEquals(new PrometheusText.Reading("jvm_memory_used_bytes", 31_457_280), PrometheusText.heap(series));
        assertEquals(new PrometheusText.Reading("jvm_buffer_memory_used_bytes", 4_194_304), PrometheusText.direct(series));
    }

    @Test
    void simpleclientNamesAreFoundTooAndPoolSeriesAreNotCountedTwice() {
        List<PrometheusText.Series> series = PrometheusText.parse(SIMPLECLIENT);
        assertEquals(new PrometheusText.Reading("jvm_memory_bytes_used", 30_000_000), PrometheusText.heap(series));
        assertEquals(new PrometheusText.Reading("jvm_buffer_pool_used_bytes", 123_456), PrometheusText.direct(series));
    }

    @Test
    void anEndpointWithoutJvmSeriesGivesNothing() {
        List<PrometheusText.Series> series = PrometheusText.parse("mosquitto_clients_connected 12\n");
        assertNull(PrometheusText.heap(series));
        assertNull(PrometheusText.direct(series));
    }

    @Test
    void labelsWithEscapesTimestampsAndSpecialValuesParse() {
        List<PrometheusText.Series> series = PrometheusText.parse("""
                a_total{path="/x\\"y\\\\z",code="200"} 5 1700000000000
                b NaN
                c{} +Inf
                broken{x="unterminated} 1
                d -2.5e3
                """);
        assertEquals(4, series.size(), series.toString());
        assertEquals(new PrometheusText.Series("a_total", Map.of("path", "/x\"y\\z", "code", "200"), 5), series.get(0));
        assertTrue(Double.isNaN(series.get(1).value()));
        assertEquals(Double.POSITIVE_INFINITY, series.get(2).value());
        assertEquals(new PrometheusText.Series("d", Map.of(), -2500), series.get(3));
    }
}
