package io.fleetmq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The idle report: ramp rate, failures by reason, losses, and memory per connection from each source. */
class IdleReportFormatTest {

    @Test
    void tableShowsTheRampFailuresByReasonLossesAndMemoryPerConnection() {
        IdleReport r = FleetReports.idle();
        String table = IdleReportTable.render(r);
        assertTrue(table.startsWith("idle, MQTT 5, QoS 1: 10,000 devices, anonymous, broker 127.0.0.1:11883"
                + " from 3 source addresses\n"), table);
        assertTrue(table.contains("keep-alive 60 s; at most 2,000 connects/s, at most 1,000 handshakes open; held 60.0 s;"),
                table);
        assertTrue(table.contains("  established (CONNACK 0)                               9,997  1,999 connects/s over 5.0 s\n"),
                table);
        assertTrue(table.contains("  failed                                                    5\n"
                + "    CONNACK 0x89 server busy                                3\n"
                + "    closed without any CONNACK                              2\n"), table);
        assertTrue(table.contains("  lost during the hold                                      1\n"
                + "    closed by the broker (DISCONNECT 0x8E)                  1\n"), table);
        assertTrue(table.contains("  broker heap               100.0 MiB      139.0 MiB          4.0 KiB\n"), table);
        assertTrue(table.contains("  broker direct               8.0 MiB        8.0 MiB              0 B\n"), table);
        assertTrue(table.contains("  broker RSS                300.0 MiB      397.6 MiB         10.0 KiB\n"), table);
        assertTrue(table.contains("  generator heap (GC'd)        4.0 MiB       33.3 MiB          3.0 KiB\n"), table);
        assertTrue(table.contains("generator threads: 6 before, 8 after the ramp (2 event loops)\n"), table);
        assertTrue(table.contains("result: 9,995 of 10,000 devices served, 5 failed, 1 lost\n"), table);
        assertTrue(table.contains("first failures and losses:\n  babc123d17: CONNACK 0x89 server busy\n  (first 1 shown)\n"), table);
        assertFalse(r.clean());
    }

    @Test
    void withoutProbesTheBrokerRowsAreLeftOut() {
        IdleReport full = FleetReports.idle();
        IdleReport bare = new IdleReport(FleetReports.options("--scenario", "idle", "--clients", "10000"), "abc123",
                "nio", "", full.rampSeconds(), full.holdSeconds(), full.counts(), 0, 1, 9_995, 9_994,
                io.fleetmq.bench.probe.ResourceSample.NONE, io.fleetmq.bench.probe.ResourceSample.NONE,
                full.generatorBefore(), full.generatorAfter());
        String table = IdleReportTable.render(bare);
        assertFalse(table.contains("broker heap"), table);
        assertFalse(table.contains("broker figures"), table);
        assertTrue(table.contains("generator heap"), table);
        String json = IdleReportTable.json(bare);
        assertTrue(json.contains("\"broker\":{\"heap_before\":null,\"heap_after\":null,\"heap_per_connection\":null,"), json);
    }

    @Test
    void jsonLineCarriesCountsReasonsAndBytes() {
        String json = IdleReportTable.json(FleetReports.idle());
        assertFalse(json.contains("\n"));
        assertTrue(json.startsWith("{\"tool\":\"fleetmq-bench\",\"run_id\":\"abc123\",\"status\":\"completed\","
                + "\"scenario\":\"idle\",\"protocol\":\"5\",\"qos\":1,\"host\":\"127.0.0.1\",\"ports\":[11883],"
                + "\"source_addresses\":[\"127.0.0.1\",\"127.0.0.2\",\"127.0.0.3\"],\"clients\":10000,"), json);
        assertTrue(json.contains("\"ramp_s\":5.0,\"connects_per_s\":1999.4,\"hold_s\":60.0,\"held_after_ramp\":9995,"
                + "\"lost_while_ramping\":0,\"lost_during_hold\":1,\"held_at_end\":9994,"), json);
        assertTrue(json.contains("\"refused_by_code\":{\"0x89\":3},"), json);
        assertTrue(json.contains("\"failures_by_reason\":{\"CONNACK 0x89 server busy\":3,\"closed without any CONNACK\":2}"),
                json);
        assertTrue(json.contains("\"connack_refused\":3,\"closed_before_connack\":2,"), json);
        assertTrue(json.contains("\"heap_before\":104857600,\"heap_after\":145797120,\"heap_per_connection\":4096.0,"), json);
        assertTrue(json.contains("\"rss_per_connection\":10240.0,"), json);
        assertTrue(json.contains("\"generator\":{\"threads_before\":6,\"threads_after\":8,"), json);
        assertTrue(json.endsWith("\"clean\":false,\"samples\":[\"babc123d17: CONNACK 0x89 server busy\"]}"), json);
        assertEquals(1999.4, Math.round(FleetReports.idle().connectsPerSecond() * 10) / 10.0);
    }
}
