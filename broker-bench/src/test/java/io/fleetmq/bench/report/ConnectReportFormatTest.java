package io.fleetmq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.scenario.Scenario;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The connect report: rates by outcome, refusals named by code, CONNACK latency, and never the password. */
class ConnectReportFormatTest {

    private static ConnectReport report(Protocol protocol, Map<Integer, Long> refused, ErrorSummary errors) {
        BenchOptions options = new BenchOptions(Scenario.CONNECT, "127.0.0.1", 1883, protocol, 0, 100, 0,
                Duration.ofSeconds(5), Duration.ofSeconds(20), Duration.ofSeconds(10), 64, 16, 2, 1883, 0, 0,
                new Credentials("bench", "s3cret"));
        return new ConnectReport(options, "abc123", "epoll", 20.0, 10_000, refused,
                new LatencySummary(10_000, 1_500_000, 3_000_000, 9_000_000, 12_000_000, 15_000_000, 2_000_000),
                new LatencySummary(400, 800_000, 900_000, 1_000_000, 1_100_000, 1_200_000, 850_000), errors);
    }

    private static final ErrorSummary NO_ERRORS = new ErrorSummary(Map.of(), List.of());

    @Test
    void tableShowsAcceptedAndRefusedRatesWithEachCodeNamed() {
        String table = ConnectReportTable.render(report(Protocol.MQTT_5, Map.of(0x86, 300L, 0x87, 100L), NO_ERRORS));
        assertTrue(table.startsWith("connect, MQTT 5: 100 connectors, user 'bench' with password, broker 127.0.0.1:1883\n"),
                table);
        assertTrue(table.contains("  accepted                                    500         10,000\n"), table);
        assertTrue(table.contains("  refused                                      20            400\n"), table);
        assertTrue(table.contains("    0x86 bad user name or password             15            300\n"), table);
        assertTrue(table.contains("    0x87 not authorized                         5            100\n"), table);
        assertTrue(table.contains("accepted            1.50 ms    3.00 ms    9.00 ms"), table);
        assertTrue(table.contains("refused              800 µs"), table);
        assertTrue(table.endsWith("errors: none\n"), table);
        assertFalse(table.contains("s3cret"), table);
    }

    @Test
    void threePointOneOneCodesHaveTheirOwnNames() {
        String table = ConnectReportTable.render(report(Protocol.MQTT_3_1_1, Map.of(4, 1L, 5, 2L), NO_ERRORS));
        assertTrue(table.contains("    0x04 bad user name or password"), table);
        assertTrue(table.contains("    0x05 not authorized"), table);
        assertEquals("0x9F connection rate exceeded", ConnAckCodes.describe(Protocol.MQTT_5, 0x9F));
        assertEquals("0x42", ConnAckCodes.describe(Protocol.MQTT_5, 0x42));
    }

    @Test
    void noRefusalsMeansNoRefusedLatencyRowAndErrorsAreListed() {
        ConnectReport r = report(Protocol.MQTT_5, Map.of(), new ErrorSummary(Map.of(ErrorKind.CONNECT_FAILED, 1L),
                List.of("connect failures: babc123c0: no CONNACK within 10 s")));
        String table = ConnectReportTable.render(r);
        assertFalse(table.contains("\nrefused "), table);
        assertTrue(table.contains("errors: connect failures 1\n  connect failures: babc123c0: no CONNACK"), table);
        assertFalse(r.clean());
    }

    @Test
    void jsonLineCarriesRatesCodesAndLatencyInMicroseconds() {
        String json = ConnectReportTable.json(report(Protocol.MQTT_5, Map.of(0x87, 100L, 0x86, 300L), NO_ERRORS));
        assertFalse(json.contains("\n"));
        assertFalse(json.contains("s3cret"), json);
        assertTrue(json.startsWith("{\"tool\":\"fleetmq-bench\",\"run_id\":\"abc123\",\"status\":\"completed\","
                + "\"scenario\":\"connect\""), json);
        assertTrue(json.contains("\"accepted_per_s\":500.0,\"refused_per_s\":20.0,\"accepted\":10000,\"refused\":400,"
                + "\"refused_by_code\":{\"0x86\":300,\"0x87\":100},"), json);
        assertTrue(json.contains("\"connack_latency_us\":{\"count\":10000,\"p50\":1500.0,"), json);
        assertTrue(json.endsWith("\"total\":0},\"error_samples\":[]}"), json);
    }
}
