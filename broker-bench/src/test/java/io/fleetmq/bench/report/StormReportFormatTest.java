package io.fleetmq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.bench.probe.GeneratorUsage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The storm report: drops, comebacks by percentile, refusals by code, closes without CONNACK, retries. */
class StormReportFormatTest {

    private static final Recovery RECOVERY = new Recovery(120_000_000, 340_000_000, 510_000_000, 530_000_000);

    @Test
    void tableShowsDropsRefusalsRetriesAndTheTimesUntilBack() {
        StormReport r = FleetReports.storm(500, 500, RECOVERY);
        String table = StormReportTable.render(r);
        assertTrue(table.startsWith("storm, MQTT 5, QoS 1: 1,000 devices, anonymous, broker 127.0.0.1:1883,1884,"
                + " clean sessions\n"), table);
        assertTrue(table.contains("reconnect at once to another port; storm timeout 60.0 s;"), table);
        assertTrue(table.contains("ramp: 1,000 of 1,000 devices up in 0.8 s (1,250 connects/s)\n"), table);
        assertTrue(table.contains("kill: SIGKILL to pid 4321 1.0 s after READY; first drop 2 ms after the kill\n"), table);
        assertTrue(table.contains("  devices dropped                                         500\n"), table);
        assertTrue(table.contains("  back (CONNACK 0 + SUBACK, or session present)           500\n"), table);
        assertTrue(table.contains("  reconnect attempts                                      537\n"
                + "  retries (attempts after a failed one)                    37\n"
                + "  CONNACK refusals                                         10\n"
                + "    0x89 server busy                                       10\n"
                + "  closed without any CONNACK                               20  refused without a reason code\n"
                + "  TCP connect failed                                        7\n"), table);
        assertTrue(table.contains("  failed attempts by reason:\n      closed without any CONNACK                           20\n"), table);
        assertTrue(table.contains("back again after the first drop            50 %       90 %       99 %      100 %\n"
                + "                                      120.00 ms  340.00 ms  510.00 ms  530.00 ms\n"), table);
        assertTrue(table.contains("result: all 500 dropped devices back within 60.0 s (storm over after 1.6 s)\n"), table);
        assertTrue(table.contains("first failed reconnects:\n  babc123d1: TCP connect failed: Connection refused\n"), table);
        assertTrue(r.allBack());
        assertEquals(37, r.retries());
    }

    @Test
    void devicesStillOutAreCalledOutAndTheirPercentilesNeverReached() {
        StormReport r = FleetReports.storm(500, 490, new Recovery(120_000_000, 340_000_000, Recovery.NOT_REACHED,
                Recovery.NOT_REACHED));
        String table = StormReportTable.render(r);
        assertTrue(table.contains("   never      never\n"), table);
        assertTrue(table.contains("result: NOT ALL BACK: 10 of 500 dropped devices still out after 60.0 s\n"), table);
        assertFalse(r.allBack());
        String json = StormReportTable.json(r);
        assertTrue(json.contains("\"back_after_first_drop_ms\":{\"p50\":120.0,\"p90\":340.0,\"p99\":null,\"p100\":null}"),
                json);
        assertTrue(json.contains("\"all_back\":false"), json);
    }

    @Test
    void jsonLineCarriesTheStormsCounts() {
        String json = StormReportTable.json(FleetReports.storm(500, 500, RECOVERY));
        assertFalse(json.contains("\n"));
        assertTrue(json.startsWith("{\"tool\":\"fleetmq-bench\",\"run_id\":\"abc123\",\"status\":\"completed\",\"note\":\"\","
                + "\"scenario\":\"storm\","), json);
        assertTrue(json.contains("\"ports\":[1883,1884],"), json);
        assertTrue(json.contains("\"dropped\":500,\"drops\":500,\"back\":500,\"still_out\":0,\"retries\":37,"
                + "\"closed_without_connack\":20,"), json);
        assertTrue(json.contains("\"storm\":{\"attempts\":537,\"connack_accepted\":510,\"served\":500,\"session_present\":0,"
                + "\"refused_by_code\":{\"0x89\":10},"), json);
        assertTrue(json.contains("\"back_after_first_drop_ms\":{\"p50\":120.0,\"p90\":340.0,\"p99\":510.0,\"p100\":530.0},"
                + "\"storm_s\":1.6,\"all_back\":true,"), json);
    }

    @Test
    void anAbortedOrQuietStormSaysWhy() {
        StormReport full = FleetReports.storm(500, 500, RECOVERY);
        FleetCounts ramp = new FleetCounts(1_000, 990, 990, 0, Map.of(0x87, 10L), Map.of(FailureKind.CONNACK_REFUSED, 10L),
                Map.of("CONNACK 0x87 not authorized", 10L), 0, Map.of(), 0, 0, List.of("babc123d3: CONNACK 0x87 not authorized"));
        StormReport aborted = new StormReport(full.options(), "abc123", "epoll", StormReport.Status.ABORTED,
                "only 990 of 1,000 devices came up and stayed (10 failed, 0 lost): a storm needs the whole fleet", 0.8,
                ramp, "", 0, 0, 0, 0, FleetCounts.NONE, Recovery.NONE, 0);
        String table = StormReportTable.render(aborted);
        assertTrue(table.contains("ramp: 990 of 1,000 devices up in 0.8 s"), table);
        assertTrue(table.contains("    CONNACK 0x87 not authorized                            10\n"), table);
        assertTrue(table.contains("ABORTED: only 990 of 1,000 devices came up"), table);
        assertFalse(table.contains("back again"), table);
        assertTrue(StormReportTable.json(aborted).contains("\"status\":\"aborted\""));
        assertFalse(aborted.allBack());

        StormReport quiet = new StormReport(full.options(), "abc123", "epoll", StormReport.Status.NO_DROP,
                "no connection was dropped within 30.0 s of READY", 0.8, full.ramp(), "no process 4321 to kill 1.0 s after READY",
                30.0, 0, 0, 0, FleetCounts.NONE, Recovery.NONE, 0);
        table = StormReportTable.render(quiet);
        assertTrue(table.contains("kill: no process 4321 to kill 1.0 s after READY\n"), table);
        assertTrue(table.endsWith("NO STORM: no connection was dropped within 30.0 s of READY\n"), table);
        assertTrue(StormReportTable.json(quiet).contains("\"status\":\"no-drop\""));
        assertFalse(quiet.allBack());
        assertEquals(8, new GeneratorUsage(8, 0, 0).threads());
    }
}
