package io.fleetmq.bench.report;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The table says what ran and every number that matters; the JSON line says the same for scripts. */
class ReportFormatTest {

    @Test
    void tableShowsRatesAccountingLatencyAndNoErrors() {
        String table = ReportTable.render(Reports.completedFanOut());
        assertTrue(table.startsWith("fan-out, MQTT 5, QoS 1: 1 publisher -> 100 subscribers, 64-byte payload, "
                + "broker 127.0.0.1:1883\n"), table);
        assertTrue(table.contains("  published                                 1,000\n"), table);
        assertTrue(table.contains("  delivered (arrivals in window)           99,500\n"), table);
        assertTrue(table.contains("  expected deliveries (x100)            2,000,000\n"), table);
        assertTrue(table.contains("  lost (undelivered after drain)               10\n"), table);
        assertTrue(table.contains("end-to-end           812 µs    2.10 ms    9.50 ms   20.00 ms   31.00 ms    1.05 ms"
                + "    1,999,990\n"), table);
        assertTrue(table.contains("PUBACK               400 µs"), table);
        assertTrue(table.endsWith("errors: none\n"), table);
    }

    @Test
    void abortedTableSaysWhyAndListsEveryError() {
        String table = ReportTable.render(Reports.abortedByRefusals());
        assertTrue(table.contains("ABORTED: 2 of 2 subscribers could not connect\n"), table);
        assertTrue(table.contains("errors: connect failures 2\n"), table);
        assertTrue(table.contains("  connect failures: bdef456s1: CONNACK refused"), table);
        assertFalse(table.contains("latency"), table);
    }

    @Test
    void jsonLineCarriesTheSameNumbersInMicroseconds() {
        String json = JsonReport.line(Reports.completedFanOut());
        assertFalse(json.contains("\n"));
        assertTrue(json.startsWith("{\"tool\":\"fleetmq-bench\",\"run_id\":\"abc123\",\"status\":\"completed\""), json);
        assertTrue(json.contains("\"scenario\":\"fan-out\",\"protocol\":\"5\",\"qos\":1,"), json);
        assertTrue(json.contains("\"published_per_s\":1000.0,\"delivered_per_s\":99500.0,"), json);
        assertTrue(json.contains("\"expected_deliveries\":2000000,\"delivered\":1999990,\"lost\":10,"), json);
        assertTrue(json.contains("\"latency_us\":{\"count\":1999990,\"p50\":812.0,\"p90\":2100.0,\"p99\":9500.0,"
                + "\"p99_9\":20000.0,\"max\":31000.0,\"mean\":1050.0}"), json);
        assertTrue(json.contains("\"errors\":{\"connect_failed\":0,"), json);
        assertTrue(json.endsWith("\"total\":0},\"error_samples\":[]}"), json);
    }

    @Test
    void jsonLineOfAnAbortedQos0RunHasNoAckLatencyAndEscapedSamples() {
        String json = JsonReport.line(Reports.abortedByRefusals());
        assertTrue(json.contains("\"status\":\"aborted\",\"note\":\"2 of 2 subscribers could not connect\""), json);
        assertTrue(json.contains("\"ack_latency_us\":null"), json);
        assertTrue(json.contains("\"connect_failed\":2,"), json);
        assertTrue(json.contains("CONNACK refused: \\\"server unavailable\\\" (0x88)"), json);
    }

    @Test
    void aSoakRunListsOneLinePerIntervalAfterTheTableAndInTheJson() {
        BenchReport base = Reports.completedFanOut();
        BenchReport soak = Reports.withSeries(base);
        String table = ReportTable.render(soak);
        int errors = table.indexOf("errors: none");
        int series = table.indexOf("time series, every 30.0 s of the measured window");
        assertTrue(errors > 0 && series > errors, "the series comes after the main table\n" + table);
        assertTrue(table.contains("     end    published/s    delivered/s        p50        p99   broker heap        direct"
                + "    broker RSS\n"), table);
        assertTrue(table.contains("  30.0 s          1,000         99,500     812 µs    9.50 ms     512.0 MiB      16.0 MiB"
                + "      1.00 GiB\n"), table);
        assertTrue(table.contains("  45.0 s            500         49,000          -          -           n/a           n/a"
                + "           n/a\n"), table);
        String json = JsonReport.line(soak);
        assertTrue(json.endsWith(",\"series\":[{\"t_s\":30.0,\"interval_s\":30.0,\"published_per_s\":1000.0,"
                + "\"delivered_per_s\":99500.0,\"p50_us\":812.0,\"p99_us\":9500.0,\"samples\":2985000,"
                + "\"broker_heap_bytes\":536870912,\"broker_direct_bytes\":16777216,\"broker_rss_bytes\":1073741824},"
                + "{\"t_s\":45.0,\"interval_s\":15.0,\"published_per_s\":500.0,\"delivered_per_s\":49000.0,"
                + "\"p50_us\":null,\"p99_us\":null,\"samples\":0,\"broker_heap_bytes\":null,"
                + "\"broker_direct_bytes\":null,\"broker_rss_bytes\":null}]}"), json);
        assertFalse(JsonReport.line(base).contains("series"), "no series field without --report-every");
        assertFalse(ReportTable.render(base).contains("time series"));
    }
}
