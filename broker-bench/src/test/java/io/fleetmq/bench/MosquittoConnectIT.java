package io.fleetmq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.connect.ConnectRun;
import io.fleetmq.bench.report.ConnectReport;
import io.fleetmq.bench.report.ConnectReportTable;
import io.fleetmq.bench.scenario.Scenario;
import io.fleetmq.bench.support.MosquittoProcess;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The connect scenario against Debian's Mosquitto, open to all and behind a password file; skipped
 * when the machine has no Mosquitto. Checks the tool's accounting (accepted, refused by code, one
 * latency sample per CONNACK, the same client IDs reconnecting), never anyone's speed.
 */
class MosquittoConnectIT {

    private static final String USER = "bench";
    private static final String PASSWORD = "s3cret pässword";
    private static final Pattern CONNECTED = Pattern.compile("New client connected from \\S+ as (\\S+) ");

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
            withPassword = MosquittoProcess.startWithPassword(passwordDir, USER, PASSWORD);
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

    private static ConnectReport run(MosquittoProcess broker, String protocol, Credentials credentials) {
        BenchOptions options = new BenchOptions(Scenario.CONNECT, "127.0.0.1", broker.port(), Protocol.parse(protocol),
                0, 3, 0, Duration.ofMillis(200), Duration.ofSeconds(1), Duration.ZERO, BenchOptions.DEFAULT_PAYLOAD,
                BenchOptions.DEFAULT_INFLIGHT, 1, broker.port(), 0, 0, credentials);
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        return new ConnectRun(options, new PrintStream(progress, true, StandardCharsets.UTF_8)).run();
    }

    @ParameterizedTest(name = "MQTT {0}")
    @CsvSource({"5", "3.1.1"})
    void anonymousConnectorsAreAcceptedOverAndOverUnderTheirOwnClientIds(String protocol) throws Exception {
        ConnectReport report = run(open, protocol, Credentials.NONE);
        String context = ConnectReportTable.render(report) + open.log();

        assertTrue(report.clean(), context);
        assertTrue(report.accepted() > 3, "each connector must have reconnected\n" + context);
        assertEquals(0, report.refused(), context);
        assertEquals(report.accepted(), report.acceptedLatency().count(), "one latency sample per CONNACK\n" + context);

        Set<String> ids = new HashSet<>();
        long connects = 0;
        Matcher m = CONNECTED.matcher(open.log());
        while (m.find()) {
            if (m.group(1).startsWith("b" + report.runId())) {
                ids.add(m.group(1));
                connects++;
            }
        }
        assertEquals(Set.copyOf(Scenario.connectorIds(3, report.runId())), ids, context);
        assertTrue(connects >= report.accepted(), "Mosquitto saw every accepted CONNECT\n" + context);
    }

    @ParameterizedTest(name = "MQTT {0}")
    @CsvSource({"5", "3.1.1"})
    void theRightPasswordIsAccepted(String protocol) throws Exception {
        ConnectReport report = run(withPassword, protocol, new Credentials(USER, PASSWORD));
        String context = ConnectReportTable.render(report) + withPassword.log();
        assertTrue(report.clean(), context);
        assertTrue(report.accepted() > 0, context);
        assertEquals(0, report.refused(), context);
    }

    /** Mosquitto 2.0 answers a wrong password with "not authorized", not "bad user name or password". */
    @ParameterizedTest(name = "MQTT {0}: code {1}")
    @CsvSource({"5, 0x87", "3.1.1, 0x05"})
    void aWrongPasswordIsRefusedWithItsCodeAndIsNoError(String protocol, String code) throws Exception {
        ConnectReport report = run(withPassword, protocol, new Credentials(USER, "wrong"));
        String context = ConnectReportTable.render(report) + withPassword.log();
        assertTrue(report.clean(), "refusals are a measurement\n" + context);
        assertEquals(0, report.accepted(), context);
        assertTrue(report.refused() > 0, context);
        assertEquals(Map.of(Integer.decode(code), report.refused()), report.refusedByCode(), context);
        assertEquals(report.refused(), report.refusedLatency().count(), context);
    }

    @ParameterizedTest(name = "MQTT {0}: code {1}")
    @CsvSource({"5, 0x87", "3.1.1, 0x05"})
    void anonymousConnectorsAreRefusedByAPasswordFile(String protocol, String code) throws Exception {
        ConnectReport report = run(withPassword, protocol, Credentials.NONE);
        String context = ConnectReportTable.render(report) + withPassword.log();
        assertEquals(0, report.accepted(), context);
        assertEquals(Map.of(Integer.decode(code), report.refused()), report.refusedByCode(), context);
    }
}
