package io.fleetmq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fleetmq.bench.cli.FleetOptions;
import io.fleetmq.bench.cli.OptionsParser;
import io.fleetmq.bench.fleet.IdleRun;
import io.fleetmq.bench.report.FailureKind;
import io.fleetmq.bench.report.IdleReport;
import io.fleetmq.bench.report.IdleReportTable;
import io.fleetmq.bench.scenario.Scenario;
import io.fleetmq.bench.support.FakeMetrics;
import io.fleetmq.bench.support.MosquittoProcess;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The idle scenario against Debian's Mosquitto: a few hundred devices over three loopback source
 * addresses, held while they ping; and a password file that refuses them all. Skipped when the
 * machine has no Mosquitto. Checks the tool's accounting and what the broker saw, never speed.
 */
class MosquittoIdleIT {

    private static final Pattern CONNECTED = Pattern.compile("New client connected from (\\S+):\\d+ as (\\S+) ");

    @TempDir
    static Path openDir;
    @TempDir
    static Path passwordDir;
    private static MosquittoProcess open;
    private static MosquittoProcess withPassword;

    @BeforeAll
    static void startMosquittos() throws Exception {
        if (MosquittoProcess.isInstalled() && Files.isExecutable(MosquittoProcess.PASSWD_BINARY)) {
            open = MosquittoProcess.start(openDir);
            withPassword = MosquittoProcess.startWithPassword(passwordDir, "bench", "secret");
        }
    }

    @BeforeEach
    void requireMosquitto() {
        assumeTrue(open != null, MosquittoProcess.BINARY + " or mosquitto_passwd not installed; skipping");
    }

    @AfterAll
    static void stopMosquittos() {
        if (open != null) {
            open.close();
        }
        if (withPassword != null) {
            withPassword.close();
        }
    }

    @Test
    void devicesOverThreeSourceAddressesAreServedHeldAndKeptAliveAndTheirCostIsSampled() throws Exception {
        int clients = 300;
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        IdleReport report;
        try (FakeMetrics metrics = new FakeMetrics()) {
            report = new IdleRun(OptionsParser.parse("--scenario", "idle", "--port", Integer.toString(open.port()),
                    "--clients", Integer.toString(clients), "--qos", "1", "--source-addresses", "127.0.0.1-127.0.0.3",
                    "--keepalive", "2", "--duration", "4s", "--threads", "1", "--connect-concurrency", "100",
                    "--broker-pid", Long.toString(open.pid()), "--metrics-url", metrics.url().toString()).orElseThrow(),
                    new PrintStream(progress, true, StandardCharsets.UTF_8)).run();
            assertEquals(2, metrics.scrapes(), "one scrape before the ramp, one after");
        }
        String context = IdleReportTable.render(report) + progress.toString(StandardCharsets.UTF_8) + open.log();

        assertTrue(report.clean(), context);
        assertEquals(clients, report.counts().attempts(), context);
        assertEquals(clients, report.counts().accepted(), context);
        assertEquals(clients, report.counts().served(), context);
        assertEquals(clients, report.heldAfterRamp(), context);
        assertEquals(clients, report.heldAtEnd(), context);
        assertEquals(0, report.counts().lost(), context);
        // Keep-alive 2 s: a PINGREQ after 1 s without a write, so three or four per device in a 4 s hold; without
        // them Mosquitto would have closed the connections after 3 s, and they would count as lost.
        assertTrue(report.counts().pings() >= 2L * clients, context);

        assertEquals((double) FakeMetrics.HEAP_STEP / clients, report.heapPerConnection(), 1e-9, context);
        assertEquals(FakeMetrics.HEAP_START, report.brokerBefore().heapBytes(), context);
        assertEquals(0.0, report.directPerConnection(), context);
        assertTrue(report.brokerBefore().rssBytes() > 0 && report.brokerAfter().rssBytes() > 0, context);
        assertFalse(Double.isNaN(report.rssPerConnection()), context);
        assertTrue(report.generatorAfter().threads() > 0, context);

        // Mosquitto saw every device once, a third from each source address.
        Map<String, Integer> bySource = new HashMap<>();
        Set<String> ids = new HashSet<>();
        Matcher m = CONNECTED.matcher(open.log());
        while (m.find()) {
            if (m.group(2).startsWith("b" + report.runId())) {
                bySource.merge(m.group(1), 1, Integer::sum);
                ids.add(m.group(2));
            }
        }
        assertEquals(Map.of("127.0.0.1", 100, "127.0.0.2", 100, "127.0.0.3", 100), bySource, context);
        assertEquals(clients, ids.size(), context);
        assertTrue(ids.contains(Scenario.deviceId(report.runId(), clients - 1)), context);
    }

    @Test
    void eachDeviceMakesAllItsSubscriptionsInOneSubscribe(@TempDir Path dir) throws Exception {
        int clients = 20;
        try (MosquittoProcess logging = MosquittoProcess.startLoggingSubscriptions(dir)) {
            ByteArrayOutputStream progress = new ByteArrayOutputStream();
            IdleReport report = new IdleRun(OptionsParser.parse("--scenario", "idle", "--port",
                    Integer.toString(logging.port()), "--clients", Integer.toString(clients), "--qos", "1",
                    "--subscriptions", "3", "--duration", "200ms", "--threads", "1").orElseThrow(),
                    new PrintStream(progress, true, StandardCharsets.UTF_8)).run();
            String context = IdleReportTable.render(report) + progress.toString(StandardCharsets.UTF_8) + logging.log();
            assertTrue(report.clean(), context);
            assertEquals(clients, report.counts().served(), context);
            assertTrue(IdleReportTable.render(report).contains("3 subscriptions per device"), context);
            assertTrue(IdleReportTable.json(report).contains("\"subscriptions_per_client\":3"), context);
            // Mosquitto logs each filter of a SUBSCRIBE as "<client ID> <QoS> <filter>".
            for (String filter : List.of("", "/1", "/2")) {
                int last = clients - 1;
                String line = Scenario.deviceId(report.runId(), last) + " 1 "
                        + Scenario.deviceTopic(FleetOptions.DEFAULT_TOPIC_PREFIX, report.runId(), last) + filter;
                assertTrue(logging.log().contains(line + "\n"), "no '" + line + "' in\n" + context);
            }
            assertFalse(logging.log().contains(Scenario.deviceTopic(FleetOptions.DEFAULT_TOPIC_PREFIX,
                    report.runId(), 0) + "/3"), context);
        }
    }

    @Test
    void refusedDevicesAreCountedByReasonCodeAndTheRunFailsWithItsReport() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Main.run(new String[] {"--scenario", "idle", "--port", Integer.toString(withPassword.port()),
                        "--clients", "20", "--duration", "200ms", "--threads", "1"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String stdout = out.toString(StandardCharsets.UTF_8);
        String context = stdout + err.toString(StandardCharsets.UTF_8);

        assertEquals(Main.EXIT_ERRORS, status, context);
        // Mosquitto 2.0 answers anonymous CONNECTs behind a password file with "not authorized".
        assertTrue(stdout.contains("    CONNACK 0x87 not authorized"), context);
        assertTrue(stdout.contains("result: 0 of 20 devices served, 20 failed, 0 lost\n"), context);
        String json = stdout.substring(stdout.lastIndexOf("\n{") + 1).trim();
        assertTrue(json.startsWith("{\"tool\":\"fleetmq-bench\"") && json.endsWith("}"), json);
        assertTrue(json.contains("\"refused_by_code\":{\"0x87\":20},\"failures\":{\"tcp_failed\":0,\"connack_refused\":20,"),
                json);
        assertTrue(json.contains("\"failures_by_reason\":{\"CONNACK 0x87 not authorized\":20}"), json);
        assertTrue(json.contains("\"" + FailureKind.CONNACK_REFUSED.key() + "\":20"), json);
    }
}
