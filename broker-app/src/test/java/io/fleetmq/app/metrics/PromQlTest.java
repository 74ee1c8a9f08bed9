package io.fleetmq.app.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** The metric names {@link PromQl} finds are exactly the selected series, whatever surrounds them. */
class PromQlTest {

    @Test
    void findsSelectedMetricsOnly() {
        assertEquals(Set.of("fleetmq_messages_received_total"), PromQl.metricNames(
                "sum by (qos) (rate(fleetmq_messages_received_total{node=~\"$node\", qos!=\"0\"}[$__rate_interval]))"));
        assertEquals(Set.of("a_seconds_sum", "a_seconds_count"), PromQl.metricNames(
                "sum by (node) (rate(a_seconds_sum[5m])) / sum by (node) (rate(a_seconds_count[5m]))"));
        assertEquals(Set.of("x_bucket"), PromQl.metricNames(
                "histogram_quantile(0.99, sum by (le, node) (rate(x_bucket{job='fleetmq'}[1m])))"));
        assertEquals(Set.of("up", "fleetmq_ready"), PromQl.metricNames(
                "up{job=\"fleetmq\"} == 0 or on (node) fleetmq_ready == bool 0 offset 5m"));
        assertEquals(Set.of("g"), PromQl.metricNames("max without (instance) (g) > 1e3 and g < Inf"));
        assertEquals(Set.of("b", "c"), PromQl.metricNames("b * on (node) group_left (dependency) c"));
    }
}
