package io.fleetmq.bench.cli;

import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.PayloadStamp;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.client.Scram;
import io.fleetmq.bench.client.TlsFiles;
import io.fleetmq.bench.scenario.Scenario;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Turns {@code --name value} (or {@code --name=value}) arguments into {@link BenchOptions}. */
public final class OptionsParser {

    /** Payloads larger than this are a typo, not a benchmark: the broker would refuse them anyway. */
    static final int MAX_PAYLOAD = 16 * 1024 * 1024;

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)?");

    public static final String USAGE = """
            Usage: java -jar fleetmq-bench.jar --scenario fan-in|fan-out|p2p|connect|idle|storm [options]

            Drives any MQTT broker over TCP and reports throughput, end-to-end latency and losses.

              --scenario NAME    fan-in:  N publishers, 1 subscriber on a '+' wildcard
                                 fan-out: 1 publisher, N subscribers on one topic
                                 p2p:     N pairs, each publisher to its own topic and subscriber
                                 connect: N connectors, each in a loop: TCP, CONNECT (clean
                                          start), CONNACK, DISCONNECT, close; reports CONNECTs/s
                                          accepted and refused (by reason code) and CONNACK latency
                                 idle:    N devices connect (clean start), each subscribes to a
                                          topic of its own and stays connected for --duration;
                                          reports connects/s, failures by reason, connections lost,
                                          and the broker's memory per connection
                                 storm:   N devices connect as in idle; when the broker drops them
                                          (a node stopped, or --kill-pid), each reconnects at once
                                          to another port under the same client ID (a port's
                                          devices spread over the others); reports how
                                          long until 50/90/99/100 % are served again
              --host HOST        broker address (default 127.0.0.1)
              --port PORT[,PORT...]
                                 broker TCP port (default 1883); idle and storm take a list, the
                                 nodes of a cluster: device i starts on port i mod n
              --subscriber-port PORT
                                 port the subscribers connect to (default: --port); another node
                                 of a cluster measures the path between nodes
              --session-expiry S Session Expiry Interval in seconds (MQTT 5) of the subscribers, or
                                 of the idle and storm devices; above 0 they have persistent
                                 sessions, and storm devices reconnect with clean start 0 and
                                 subscribe again only when the session is gone (default 0)
              --protocol 5|3.1.1 MQTT version (default 5)
              --qos 0|1|2        QoS of publishes and subscriptions (default 0)
              --clients N        publishers (fan-in), subscribers (fan-out), pairs (p2p),
                                 connectors (connect) or devices (idle, storm) (default 100)
              --username NAME    user name in every client's CONNECT (default: none)
              --password TEXT    password in every client's CONNECT (default: none); MQTT 3.1.1
                                 needs --username with it
              --password-file F  the password is the content of F without its final line break
                                 (a JWT, say), kept off the command line
              --auth-method M    connect only, MQTT 5: SCRAM-SHA-256 or SCRAM-SHA-512 enhanced
                                 authentication with --username and --password, which are then
                                 not sent in the CONNECT
              --tls              connect only: TLS on every connection (the CONNACK latency
                                 includes the TLS handshake)
              --cafile F         PEM CA certificates the broker's certificate must lead to
                                 (default: the JDK's trust store); needs --tls
              --cert F, --key F  PEM client certificate and its PKCS#8 key, for mutual TLS;
                                 need --tls
              --rate R           total msgs/s over all publishers; 0 = as fast as flow control
                                 allows (default 0)
              --inflight W       unacknowledged QoS 1/2 publishes per publisher (default 16)
              --warmup D         traffic before measuring, e.g. 5s (default 5s)
              --duration D       measured time, e.g. 30s, 500ms, 2m (default 30s); idle: how long
                                 the connections are held once all are up; storm: longest
                                 wait after READY for the first dropped connection
              --drain D          longest wait for stragglers after the last publish (default 10s)
              --payload BYTES    payload size, at least 16 (default 64)
              --threads T        client I/O threads (default: number of cores)
              --subscriber-threads S  I/O threads of the subscribers' own; 0 (default) shares --threads
              --report-every D   fan-in, fan-out, p2p: after the table, one line per interval D of
                                 the measured window (delivered msg/s, p50/p99 latency, broker
                                 memory), for soak runs; default: none
              --metrics-url URL  the broker's Prometheus text endpoint (http://127.0.0.1:PORT/metrics):
                                 its JVM heap and direct memory, before and after the ramp (idle)
                                 or per interval (--report-every)
              --broker-pid PID   the broker's process on this machine, any broker: its resident
                                 memory (VmRSS) before and after the ramp, or per interval

            Idle and storm:
              --keepalive S      Keep Alive in seconds; the client sends PINGREQ when it wrote
                                 nothing for S/2, and closes after 1.5 S without a byte (default 60;
                                 0 = off)
              --source-addresses A-B|A,B,...
                                 local addresses to bind, round-robin, e.g. 127.0.0.1-127.0.0.50
                                 (Linux routes all of 127/8 to lo). Each address and broker port
                                 gives about 28,000 ephemeral ports: more connections need more
                                 addresses (default: the kernel's choice)
              --connect-rate R   new connections per second while ramping up; 0 = as fast as
                                 allowed (default 0)
              --connect-concurrency C
                                 most handshakes in flight while ramping up (default 1000)
              --topic-prefix P   device i subscribes to P/<run id>/i at --qos (default fleetmq-bench)
              --subscriptions K  topic filters per device, in one SUBSCRIBE: P/<run id>/i and
                                 P/<run id>/i/1 .. P/<run id>/i/K-1 (default 1)

            Storm only:
              --kill-pid PID     SIGKILL this process (a broker node) --kill-after after READY
              --kill-after D     (default 5s)
              --reconnect-jitter D
                                 wait a random time below D before each reconnect (default 0: at once)
              --storm-timeout D  every dropped device must be served again (CONNACK 0 and SUBACK, or
                                 session present) within D of the first drop (default 60s)

            Idle and storm need an open-file limit of at least clients + 1000 (ulimit -n).

              --help             this text

            Output: a table on stdout followed by one JSON line. Progress goes to stderr; a storm
            prints a line READY there once every device is up.
            Exit status: 0 run completed without errors, 1 errors counted, run aborted, connections
            lost (idle) or not all back (storm), 2 usage error.
            """;

    private OptionsParser() {
    }

    /** Empty when the arguments ask for help. */
    public static Optional<BenchOptions> parse(String... args) throws UsageException {
        Scenario scenario = null;
        String host = BenchOptions.DEFAULT_HOST;
        int port = BenchOptions.DEFAULT_PORT;
        Protocol protocol = Protocol.MQTT_5;
        int qos = 0;
        int clients = BenchOptions.DEFAULT_CLIENTS;
        long rate = 0;
        Duration warmup = BenchOptions.DEFAULT_WARMUP;
        Duration duration = BenchOptions.DEFAULT_DURATION;
        Duration drain = BenchOptions.DEFAULT_DRAIN;
        int payload = BenchOptions.DEFAULT_PAYLOAD;
        int inflight = BenchOptions.DEFAULT_INFLIGHT;
        int threads = Runtime.getRuntime().availableProcessors();
        int subscriberPort = 0;
        long sessionExpiry = 0;
        int subscriberThreads = 0;
        String username = null;
        String password = null;
        Path passwordFile = null;
        Scram.Algorithm authMethod = null;
        boolean tls = false;
        Path caFile = null;
        Path certFile = null;
        Path keyFile = null;
        List<Integer> ports = List.of();
        int keepAlive = FleetOptions.DEFAULT_KEEP_ALIVE;
        List<InetAddress> sourceAddresses = List.of();
        long connectRate = 0;
        int connectConcurrency = FleetOptions.DEFAULT_CONNECT_CONCURRENCY;
        String topicPrefix = FleetOptions.DEFAULT_TOPIC_PREFIX;
        int subscriptions = FleetOptions.DEFAULT_SUBSCRIPTIONS;
        long killPid = 0;
        Duration killAfter = FleetOptions.DEFAULT_KILL_AFTER;
        Duration reconnectJitter = Duration.ZERO;
        Duration stormTimeout = FleetOptions.DEFAULT_STORM_TIMEOUT;
        URI metricsUrl = null;
        long brokerPid = 0;
        Duration reportEvery = Duration.ZERO;
        Set<String> given = new LinkedHashSet<>();

        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                return Optional.empty();
            }
            if (!arg.startsWith("--")) {
                throw new UsageException("unexpected argument '" + arg + "'");
            }
            if (arg.equals("--tls")) { // the one option without a value
                tls = true;
                continue;
            }
            String name;
            String value;
            int eq = arg.indexOf('=');
            if (eq > 0) {
                name = arg.substring(2, eq);
                value = arg.substring(eq + 1);
            } else {
                name = arg.substring(2);
                if (i + 1 >= args.length) {
                    throw new UsageException("--" + name + " needs a value");
                }
                value = args[++i];
            }
            given.add(name);
            try {
                switch (name) {
                    case "scenario" -> scenario = Scenario.parse(value);
                    case "host" -> host = nonBlank(value);
                    case "port" -> {
                        ports = portList(value);
                        port = ports.get(0);
                    }
                    case "subscriber-port" -> subscriberPort = intIn(value, 1, 65_535);
                    case "session-expiry" -> sessionExpiry = longIn(value, 0, 0xFFFF_FFFFL);
                    case "protocol" -> protocol = Protocol.parse(value);
                    case "qos" -> qos = intIn(value, 0, 2);
                    case "clients" -> clients = intIn(value, 1, 1_000_000);
                    case "rate" -> rate = longIn(value, 0, Long.MAX_VALUE);
                    case "inflight" -> inflight = intIn(value, 1, 65_535);
                    case "warmup" -> warmup = duration(value);
                    case "duration" -> duration = positive(duration(value));
                    case "drain" -> drain = duration(value);
                    case "payload" -> payload = intIn(value, PayloadStamp.SIZE, MAX_PAYLOAD);
                    case "threads" -> threads = intIn(value, 1, 1024);
                    case "subscriber-threads" -> subscriberThreads = intIn(value, 0, 1024);
                    case "username" -> username = utf8String(value);
                    case "password" -> password = binary(value);
                    case "password-file" -> passwordFile = readable(value);
                    case "auth-method" -> authMethod = Scram.Algorithm.parse(value);
                    case "cafile" -> caFile = readable(value);
                    case "cert" -> certFile = readable(value);
                    case "key" -> keyFile = readable(value);
                    case "keepalive" -> keepAlive = intIn(value, 0, 65_535);
                    case "source-addresses" -> sourceAddresses = SourceAddresses.parse(value);
                    case "connect-rate" -> connectRate = longIn(value, 0, 1_000_000_000L);
                    case "connect-concurrency" -> connectConcurrency = intIn(value, 1, 1_000_000);
                    case "topic-prefix" -> topicPrefix = topicPrefix(value);
                    case "subscriptions" -> subscriptions = intIn(value, 1, 1_000);
                    case "kill-pid" -> killPid = longIn(value, 1, Long.MAX_VALUE);
                    case "kill-after" -> killAfter = duration(value);
                    case "reconnect-jitter" -> reconnectJitter = duration(value);
                    case "storm-timeout" -> stormTimeout = positive(duration(value));
                    case "metrics-url" -> metricsUrl = httpUrl(value);
                    case "broker-pid" -> brokerPid = longIn(value, 1, Long.MAX_VALUE);
                    case "report-every" -> reportEvery = positive(duration(value));
                    default -> throw new UsageException("unknown option --" + name);
                }
            } catch (IllegalArgumentException e) {
                throw new UsageException("--" + name + ": " + e.getMessage());
            }
        }
        if (scenario == null) {
            throw new UsageException("--scenario is required (" + Scenario.NAMES + ")");
        }
        onlyFor(given, scenario, EnumSet.of(Scenario.IDLE, Scenario.STORM), "the idle and storm scenarios",
                "keepalive", "source-addresses", "connect-rate", "connect-concurrency", "topic-prefix", "subscriptions");
        onlyFor(given, scenario, EnumSet.of(Scenario.STORM), "the storm scenario",
                "kill-pid", "kill-after", "reconnect-jitter", "storm-timeout");
        onlyFor(given, scenario, EnumSet.of(Scenario.FAN_IN, Scenario.FAN_OUT, Scenario.P2P),
                "fan-in, fan-out and p2p", "report-every");
        onlyFor(given, scenario, EnumSet.of(Scenario.FAN_IN, Scenario.FAN_OUT, Scenario.P2P, Scenario.IDLE),
                "fan-in, fan-out, p2p (with --report-every) and idle", "metrics-url", "broker-pid");
        if (ports.size() > 1 && !scenario.holdsFleet()) {
            throw new UsageException("--port takes a list only in the idle and storm scenarios");
        }
        if (scenario.publishes() && (metricsUrl != null || brokerPid > 0) && reportEvery.isZero()) {
            throw new UsageException("--metrics-url and --broker-pid need --report-every in " + scenario.label());
        }
        if (scenario == Scenario.STORM && killPid > 0 && killAfter.compareTo(duration) >= 0) {
            throw new UsageException("--kill-after must be shorter than --duration, the wait for the first drop");
        }
        if (scenario == Scenario.STORM && sessionExpiry > 0 && protocol != Protocol.MQTT_5) {
            throw new UsageException("--session-expiry needs MQTT 5 in a storm: 3.1.1 has no expiry, and its"
                    + " persistent sessions would stay on the broker for ever");
        }
        if (passwordFile != null) {
            if (password != null) {
                throw new UsageException("--password and --password-file exclude each other");
            }
            password = readPassword(passwordFile);
        }
        if ((tls || authMethod != null) && scenario != Scenario.CONNECT) {
            throw new UsageException("--tls and --auth-method are for the connect scenario");
        }
        if (!tls && (caFile != null || certFile != null || keyFile != null)) {
            throw new UsageException("--cafile, --cert and --key need --tls");
        }
        if ((certFile == null) != (keyFile == null)) {
            throw new UsageException("--cert and --key go together");
        }
        if (authMethod != null && (username == null || password == null || protocol != Protocol.MQTT_5)) {
            throw new UsageException("--auth-method needs --username, --password and MQTT 5");
        }
        if (password != null && username == null && protocol == Protocol.MQTT_3_1_1) {
            // [MQTT-3.1.2-22]: in 3.1.1 the Password Flag needs the User Name Flag.
            throw new UsageException("--password needs --username under MQTT 3.1.1");
        }
        return Optional.of(new BenchOptions(scenario, host, port, protocol, qos, clients, rate, warmup, duration,
                drain, payload, inflight, threads, subscriberPort == 0 ? port : subscriberPort, sessionExpiry,
                subscriberThreads, new Credentials(username, password, authMethod),
                tls ? new TlsFiles(caFile, certFile, keyFile) : null,
                new FleetOptions(ports.size() > 1 ? ports : List.of(), keepAlive, sourceAddresses, connectRate,
                        connectConcurrency, topicPrefix, subscriptions, killPid, killAfter, reconnectJitter, stormTimeout),
                new ProbeOptions(metricsUrl, brokerPid, reportEvery)));
    }

    /** A usage error when any of {@code names} was given for a scenario outside {@code allowed}. */
    private static void onlyFor(Set<String> given, Scenario scenario, Set<Scenario> allowed, String what,
                                String... names) throws UsageException {
        if (allowed.contains(scenario)) {
            return;
        }
        for (String name : names) {
            if (given.contains(name)) {
                throw new UsageException("--" + name + " is for " + what);
            }
        }
    }

    /** {@code 1883} or {@code 1883,1884,1885}. */
    static List<Integer> portList(String text) {
        List<Integer> ports = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            ports.add(intIn(part, 1, 65_535));
        }
        return List.copyOf(ports);
    }

    /** A topic name prefix: no wildcards [MQTT-4.7.1-1], not empty, no trailing slash to double. */
    private static String topicPrefix(String value) {
        String prefix = utf8String(value);
        if (prefix.isEmpty() || prefix.contains("+") || prefix.contains("#") || prefix.endsWith("/")) {
            throw new IllegalArgumentException("'" + value + "' must be a non-empty topic without wildcards"
                    + " or a trailing '/'");
        }
        return prefix;
    }

    private static URI httpUrl(String value) {
        URI uri;
        try {
            uri = new URI(value.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("'" + value + "' is not a URL", e);
        }
        if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
            throw new IllegalArgumentException("'" + value + "' is not an http:// or https:// URL with a host");
        }
        return uri;
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}, {@code 1.5s}, {@code 1h}; a bare number is seconds. */
    static Duration duration(String text) {
        Matcher m = DURATION.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration such as 30s, 500ms or 2m");
        }
        BigDecimal amount = new BigDecimal(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        BigDecimal nanosPerUnit = BigDecimal.valueOf(switch (unit) {
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> throw new IllegalStateException(unit);
        });
        return Duration.ofNanos(amount.multiply(nanosPerUnit).longValueExact());
    }

    private static Path readable(String value) {
        Path path = Path.of(value);
        if (!Files.isReadable(path) || Files.isDirectory(path)) {
            throw new IllegalArgumentException("cannot read the file " + value);
        }
        return path;
    }

    private static String readPassword(Path file) throws UsageException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UsageException("--password-file: " + e.getMessage());
        }
        if (text.endsWith("\n")) {
            text = text.substring(0, text.length() - (text.endsWith("\r\n") ? 2 : 1));
        }
        try {
            return binary(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--password-file: " + e.getMessage());
        }
    }

    private static Duration positive(Duration d) {
        if (d.isZero()) {
            throw new IllegalArgumentException("must be longer than zero");
        }
        return d;
    }

    private static String nonBlank(String value) {
        if (value.isBlank()) {
            throw new IllegalArgumentException("must not be empty");
        }
        return value.trim();
    }

    /** An MQTT UTF-8 string holds at most 65,535 bytes and no U+0000 [MQTT-1.5.4-2]. */
    private static String utf8String(String value) {
        if (value.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("must not contain the null character");
        }
        int bytes = value.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (bytes > 65_535) {
            throw new IllegalArgumentException(bytes + " bytes is longer than the 65535 MQTT allows");
        }
        return value;
    }

    /** The password is Binary Data in MQTT 5 (a string in 3.1.1): at most 65,535 bytes, any content. */
    private static String binary(String value) {
        int bytes = value.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (bytes > 65_535) {
            throw new IllegalArgumentException(bytes + " bytes is longer than the 65535 MQTT allows");
        }
        return value;
    }

    private static int intIn(String text, int min, int max) {
        return (int) longIn(text, min, max);
    }

    private static long longIn(String text, long min, long max) {
        long value;
        try {
            value = Long.parseLong(text.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a whole number", e);
        }
        if (value < min || value > max) {
            throw new IllegalArgumentException(value + " is outside " + min + " .. " + max);
        }
        return value;
    }
}
