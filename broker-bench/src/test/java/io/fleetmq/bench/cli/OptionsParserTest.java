package io.fleetmq.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.client.Scram;
import io.fleetmq.bench.client.TlsFiles;
import io.fleetmq.bench.scenario.Scenario;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OptionsParserTest {

    private static BenchOptions parse(String... args) throws UsageException {
        return OptionsParser.parse(args).orElseThrow();
    }

    @Test
    void onlyTheScenarioIsNeededEverythingElseHasItsDocumentedDefault() throws UsageException {
        BenchOptions o = parse("--scenario", "fan-in");
        assertEquals(BenchOptions.defaults(Scenario.FAN_IN), o);
        assertEquals("127.0.0.1", o.host());
        assertEquals(1883, o.port());
        assertEquals(Protocol.MQTT_5, o.protocol());
        assertEquals(0, o.qos());
        assertEquals(100, o.clients());
        assertEquals(0, o.rate());
        assertEquals(Duration.ofSeconds(5), o.warmup());
        assertEquals(Duration.ofSeconds(30), o.duration());
        assertEquals(64, o.payloadBytes());
        assertEquals(16, o.inflight());
        assertEquals(Credentials.NONE, o.credentials());
    }

    @Test
    void userNameAndPasswordGoIntoEveryConnect() throws UsageException {
        BenchOptions o = parse("--scenario", "connect", "--username", "bench", "--password=s3cret=x");
        assertEquals(Scenario.CONNECT, o.scenario());
        assertEquals(new Credentials("bench", "s3cret=x"), o.credentials());
        assertEquals(new Credentials("bench", null), parse("--scenario", "p2p", "--username", "bench").credentials());
        assertEquals(new Credentials("", ""), parse("--scenario", "p2p", "--username", "", "--password", "").credentials(),
                "empty is a value in MQTT, not an absence");
    }

    @Test
    void aPasswordWithoutUserNameIsMqtt5Only_MQTT_3_1_2_22() throws UsageException {
        assertEquals(new Credentials(null, "token"), parse("--scenario", "connect", "--password", "token").credentials());
        assertMessage("--password needs --username under MQTT 3.1.1",
                "--scenario", "connect", "--protocol", "3.1.1", "--password", "token");
    }

    @Test
    void userNameAndPasswordMustFitAnMqttString() {
        assertMessage("--username: must not contain the null character", "--scenario", "connect", "--username", "a\0b");
        assertMessage("--password: 65536 bytes is longer than the 65535 MQTT allows",
                "--scenario", "connect", "--username", "u", "--password", "x".repeat(65_536));
    }

    @Test
    void everyOptionInBothSpellings() throws UsageException {
        BenchOptions o = parse("--scenario=p2p", "--host", "localhost", "--port=11883", "--protocol", "3.1.1",
                "--qos", "2", "--clients=7", "--rate", "10_000", "--inflight", "4", "--warmup", "500ms",
                "--duration=2m", "--drain", "1.5s", "--payload", "128", "--threads", "3");
        assertEquals(new BenchOptions(Scenario.P2P, "localhost", 11883, Protocol.MQTT_3_1_1, 2, 7, 10_000,
                Duration.ofMillis(500), Duration.ofMinutes(2), Duration.ofMillis(1500), 128, 4, 3), o);
    }

    @Test
    void subscribersMayConnectToAnotherPortThanPublishers() throws UsageException {
        assertEquals(11884, parse("--scenario", "p2p", "--port", "11883", "--subscriber-port", "11884").subscriberPort());
        assertEquals(11883, parse("--scenario", "p2p", "--port", "11883").subscriberPort());
    }

    @Test
    void subscribersShareThePublishersThreadsUnlessGivenTheirOwn() throws UsageException {
        assertEquals(0, parse("--scenario", "fan-in").subscriberThreads());
        assertEquals(1, parse("--scenario", "fan-in", "--subscriber-threads", "1").subscriberThreads());
        assertThrows(UsageException.class, () -> parse("--scenario", "fan-in", "--subscriber-threads", "-1"));
    }

    @Test
    void helpAsksForNoRun() throws UsageException {
        assertTrue(OptionsParser.parse("--help").isEmpty());
        assertTrue(OptionsParser.parse("--scenario", "p2p", "-h").isEmpty());
    }

    @Test
    void durationsTakeMillisecondsSecondsMinutesHoursAndBareSeconds() {
        assertEquals(Duration.ofSeconds(30), OptionsParser.duration("30s"));
        assertEquals(Duration.ofMillis(250), OptionsParser.duration("250ms"));
        assertEquals(Duration.ofMinutes(2), OptionsParser.duration("2m"));
        assertEquals(Duration.ofHours(1), OptionsParser.duration("1h"));
        assertEquals(Duration.ofMillis(1500), OptionsParser.duration("1.5s"));
        assertEquals(Duration.ofSeconds(20), OptionsParser.duration("20"));
        assertEquals(Duration.ZERO, OptionsParser.duration("0s"));
        assertThrows(IllegalArgumentException.class, () -> OptionsParser.duration("30 sec"));
        assertThrows(IllegalArgumentException.class, () -> OptionsParser.duration("-1s"));
    }

    @Test
    void mistakesNameTheOptionAndWhatIsWrong() {
        assertMessage("--scenario is required (fan-in, fan-out, p2p, connect, idle or storm)", "--qos", "1");
        assertMessage("unknown option --speed", "--scenario", "p2p", "--speed", "9");
        assertMessage("--qos needs a value", "--scenario", "p2p", "--qos");
        assertMessage("--qos: 3 is outside 0 .. 2", "--scenario", "p2p", "--qos", "3");
        assertMessage("--payload: 15 is outside 16 .. 16777216", "--scenario", "p2p", "--payload", "15");
        assertMessage("--duration: must be longer than zero", "--scenario", "p2p", "--duration", "0s");
        assertMessage("--clients: 'many' is not a whole number", "--scenario", "p2p", "--clients", "many");
        assertMessage("--scenario: unknown scenario 'fanin': use fan-in, fan-out, p2p, connect, idle or storm",
                "--scenario", "fanin");
        assertMessage("--protocol: unknown protocol '4': use 5 or 3.1.1", "--scenario", "p2p", "--protocol", "4");
        assertMessage("unexpected argument 'p2p'", "p2p");
    }

    private static void assertMessage(String expected, String... args) {
        assertEquals(expected, assertThrows(UsageException.class, () -> OptionsParser.parse(args)).getMessage());
    }

    @Test
    void aPasswordFileHoldsATokenWithoutItsLineBreak(@TempDir Path dir) throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "aaa.bbb.ccc\n");
        assertEquals(new Credentials(null, "aaa.bbb.ccc"),
                parse("--scenario", "connect", "--password-file", token.toString()).credentials());
        assertMessage("--password and --password-file exclude each other",
                "--scenario", "connect", "--password", "x", "--password-file", token.toString());
    }

    @Test
    void scramNeedsAUserNameAPasswordAndMqtt5() throws UsageException {
        Credentials c = parse("--scenario", "connect", "--username", "u", "--password", "p",
                "--auth-method", "SCRAM-SHA-256").credentials();
        assertEquals(Scram.Algorithm.SHA_256, c.authMethod());
        assertEquals("user 'u' with password via SCRAM-SHA-256", c.describe());
        assertMessage("--auth-method needs --username, --password and MQTT 5",
                "--scenario", "connect", "--username", "u", "--auth-method", "SCRAM-SHA-512");
        assertMessage("--tls and --auth-method are for the connect scenario",
                "--scenario", "p2p", "--username", "u", "--password", "p", "--auth-method", "SCRAM-SHA-512");
    }

    @Test
    void tlsIsAFlagAndItsFilesNeedIt(@TempDir Path dir) throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
        Path cert = Files.writeString(dir.resolve("c.pem"), "x");
        Path key = Files.writeString(dir.resolve("c.key"), "x");
        BenchOptions o = parse("--scenario", "connect", "--tls", "--cafile", ca.toString(), "--cert", cert.toString(),
                "--key", key.toString(), "--port", "8883");
        assertEquals(new TlsFiles(ca, cert, key), o.tls());
        assertEquals(8883, o.port());
        assertEquals(null, parse("--scenario", "connect").tls());
        assertMessage("--cafile, --cert and --key need --tls", "--scenario", "connect", "--cafile", ca.toString());
        assertMessage("--cert and --key go together", "--scenario", "connect", "--tls", "--cert", cert.toString());
        assertMessage("--cafile: cannot read the file " + dir.resolve("none"),
                "--scenario", "connect", "--tls", "--cafile", dir.resolve("none").toString());
    }

    @Test
    void idleTakesItsFleetSettingsAndPortsSpreadOverAList() throws Exception {
        BenchOptions o = parse("--scenario", "idle", "--clients", "100_000", "--port", "1883,1884, 1885",
                "--keepalive", "30", "--source-addresses", "127.0.0.1-127.0.0.50", "--connect-rate", "5000",
                "--connect-concurrency", "200", "--topic-prefix", "fleet/load", "--subscriptions", "5", "--duration", "5m",
                "--metrics-url", "http://127.0.0.1:18083/metrics", "--broker-pid", "4242");
        assertEquals(Scenario.IDLE, o.scenario());
        assertEquals(1883, o.port(), "the first of the list");
        assertEquals(List.of(1883, 1884, 1885), o.ports());
        FleetOptions f = o.fleet();
        assertEquals(30, f.keepAliveSeconds());
        assertEquals(50, f.sourceAddresses().size());
        assertEquals(InetAddress.getByName("127.0.0.50"), f.sourceAddresses().get(49));
        assertEquals(5000, f.connectRate());
        assertEquals(200, f.connectConcurrency());
        assertEquals("fleet/load", f.topicPrefix());
        assertEquals(5, f.subscriptions());
        assertEquals(Duration.ofMinutes(5), o.duration());
        assertEquals(URI.create("http://127.0.0.1:18083/metrics"), o.probes().metricsUrl());
        assertEquals(4242, o.probes().brokerPid());
    }

    @Test
    void fleetDefaultsAreTheDocumentedOnes() throws UsageException {
        BenchOptions o = parse("--scenario", "storm");
        assertEquals(FleetOptions.DEFAULTS, o.fleet());
        assertEquals(ProbeOptions.NONE, o.probes());
        assertEquals(List.of(1883), o.ports());
        assertEquals(60, o.fleet().keepAliveSeconds());
        assertEquals(1000, o.fleet().connectConcurrency());
        assertEquals(0, o.fleet().connectRate());
        assertEquals(Duration.ofSeconds(60), o.fleet().stormTimeout());
        assertEquals(Duration.ofSeconds(5), o.fleet().killAfter());
        assertEquals(Duration.ZERO, o.fleet().reconnectJitter());
        assertEquals("fleetmq-bench", o.fleet().topicPrefix());
        assertEquals(1, o.fleet().subscriptions());
    }

    @Test
    void stormTakesKillJitterTimeoutAndPersistentSessions() throws UsageException {
        BenchOptions o = parse("--scenario", "storm", "--port", "1883,1884", "--kill-pid", "1234", "--kill-after",
                "2s", "--duration", "1m", "--reconnect-jitter", "250ms", "--storm-timeout", "90s",
                "--session-expiry", "300");
        assertEquals(1234, o.fleet().killPid());
        assertEquals(Duration.ofSeconds(2), o.fleet().killAfter());
        assertEquals(Duration.ofMillis(250), o.fleet().reconnectJitter());
        assertEquals(Duration.ofSeconds(90), o.fleet().stormTimeout());
        assertEquals(300, o.sessionExpiry());
        assertMessage("--kill-after must be shorter than --duration, the wait for the first drop",
                "--scenario", "storm", "--kill-pid", "1234", "--kill-after", "30s");
        assertMessage("--session-expiry needs MQTT 5 in a storm: 3.1.1 has no expiry, and its persistent sessions"
                + " would stay on the broker for ever", "--scenario", "storm", "--protocol", "3.1.1",
                "--session-expiry", "60");
    }

    @Test
    void eachNewOptionBelongsToItsScenarios() {
        assertMessage("--keepalive is for the idle and storm scenarios", "--scenario", "p2p", "--keepalive", "10");
        assertMessage("--source-addresses is for the idle and storm scenarios",
                "--scenario", "connect", "--source-addresses", "127.0.0.1");
        assertMessage("--subscriptions is for the idle and storm scenarios", "--scenario", "p2p", "--subscriptions", "2");
        assertMessage("--kill-pid is for the storm scenario", "--scenario", "idle", "--kill-pid", "1");
        assertMessage("--storm-timeout is for the storm scenario", "--scenario", "idle", "--storm-timeout", "1s");
        assertMessage("--report-every is for fan-in, fan-out and p2p", "--scenario", "idle", "--report-every", "30s");
        assertMessage("--broker-pid is for fan-in, fan-out, p2p (with --report-every) and idle",
                "--scenario", "storm", "--broker-pid", "1");
        assertMessage("--metrics-url and --broker-pid need --report-every in fan-in",
                "--scenario", "fan-in", "--broker-pid", "1");
        assertMessage("--port takes a list only in the idle and storm scenarios", "--scenario", "p2p", "--port",
                "1883,1884");
    }

    @Test
    void soakRunsReportEveryIntervalWithTheBrokersMemory() throws UsageException {
        BenchOptions o = parse("--scenario", "p2p", "--duration", "30m", "--report-every", "30s",
                "--metrics-url", "http://127.0.0.1:18083/metrics", "--broker-pid", "99");
        assertEquals(Duration.ofSeconds(30), o.probes().reportEvery());
        assertTrue(o.probes().series());
        assertTrue(o.probes().watchesBroker());
        assertMessage("--report-every: must be longer than zero", "--scenario", "p2p", "--report-every", "0s");
    }

    @Test
    void badFleetValuesSayWhatIsWrong() {
        assertMessage("--port: '' is not a whole number", "--scenario", "idle", "--port", "1883,");
        assertMessage("--port: 70000 is outside 1 .. 65535", "--scenario", "idle", "--port", "1883,70000");
        assertMessage("--source-addresses: the range 127.0.0.9-127.0.0.1 ends before it starts",
                "--scenario", "idle", "--source-addresses", "127.0.0.9-127.0.0.1");
        assertMessage("--source-addresses: 'localhost' is neither an IP address nor a range A-B",
                "--scenario", "idle", "--source-addresses", "localhost");
        assertMessage("--metrics-url: 'ftp://x/metrics' is not an http:// or https:// URL with a host",
                "--scenario", "idle", "--metrics-url", "ftp://x/metrics");
        assertMessage("--topic-prefix: 'a/+' must be a non-empty topic without wildcards or a trailing '/'",
                "--scenario", "idle", "--topic-prefix", "a/+");
        assertMessage("--connect-concurrency: 0 is outside 1 .. 1000000", "--scenario", "idle",
                "--connect-concurrency", "0");
        assertMessage("--keepalive: 65536 is outside 0 .. 65535", "--scenario", "idle", "--keepalive", "65536");
    }
}
