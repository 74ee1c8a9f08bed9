package io.fleetmq.bench.cli;

import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.PayloadStamp;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.client.Scram;
import io.fleetmq.bench.client.TlsFiles;
import io.fleetmq.bench.scenario.Scenario;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Turns {@code --name value} (or {@code --name=value}) arguments into {@link BenchOptions}. */
public final class OptionsParser {

    /** Payloads larger than this are a typo, not a benchmark: the broker would refuse them anyway. */
    static final int MAX_PAYLOAD = 16 * 1024 * 1024;

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)?");

    public static final String USAGE = """
            Usage: java -jar fleetmq-bench.jar --scenario fan-in|fan-out|p2p|connect [options]

            Drives any MQTT broker over TCP and reports throughput, end-to-end latency and losses.

              --scenario NAME    fan-in:  N publishers, 1 subscriber on a '+' wildcard
                                 fan-out: 1 publisher, N subscribers on one topic
                                 p2p:     N pairs, each publisher to its own topic and subscriber
                                 connect: N connectors, each in a loop: TCP, CONNECT (clean
                                          start), CONNACK, DISCONNECT, close; reports CONNECTs/s
                                          accepted and refused (by reason code) and CONNACK latency
              --host HOST        broker address (default 127.0.0.1)
              --port PORT        broker TCP port (default 1883)
              --subscriber-port PORT
                                 port the subscribers connect to (default: --port); another node
                                 of a cluster measures the path between nodes
              --session-expiry S subscribers' Session Expiry Interval in seconds (MQTT 5); above 0
                                 they have persistent sessions (default 0)
              --protocol 5|3.1.1 MQTT version (default 5)
              --qos 0|1|2        QoS of publishes and subscriptions (default 0)
              --clients N        publishers (fan-in), subscribers (fan-out), pairs (p2p) or
                                 connectors (connect) (default 100)
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
              --duration D       measured time, e.g. 30s, 500ms, 2m (default 30s)
              --drain D          longest wait for stragglers after the last publish (default 10s)
              --payload BYTES    payload size, at least 16 (default 64)
              --threads T        client I/O threads (default: number of cores)
              --subscriber-threads S  I/O threads of the subscribers' own; 0 (default) shares --threads
              --help             this text

            Output: a table on stdout followed by one JSON line. Progress goes to stderr.
            Exit status: 0 run completed without errors, 1 errors counted or run aborted, 2 usage error.
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
            try {
                switch (name) {
                    case "scenario" -> scenario = Scenario.parse(value);
                    case "host" -> host = nonBlank(value);
                    case "port" -> port = intIn(value, 1, 65_535);
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
                    default -> throw new UsageException("unknown option --" + name);
                }
            } catch (IllegalArgumentException e) {
                throw new UsageException("--" + name + ": " + e.getMessage());
            }
        }
        if (scenario == null) {
            throw new UsageException("--scenario is required (fan-in, fan-out, p2p or connect)");
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
                tls ? new TlsFiles(caFile, certFile, keyFile) : null));
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
