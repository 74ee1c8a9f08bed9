package io.fleetmq.app;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.config.Settings;
import io.fleetmq.embedded.EmbeddedServices;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Parses the command line, loads the configuration and starts what the subcommand asks for.
 * Separate from {@link Main} so tests can run the exact start-up path in-process.
 */
public final class Launcher {

    private static final Logger log = LoggerFactory.getLogger(Launcher.class);

    static final String USAGE = """
            Usage: java -jar fleetmq.jar [standalone|node|services] [--config FILE]
                   java -jar fleetmq.jar import-mosquitto --passwd FILE [--acl FILE] [--dynsec FILE] [--dry-run]
              standalone  one node on embedded Kafka, Redis and PostgreSQL (the default);
                          any of them can be external (KAFKA_BOOTSTRAP_SERVERS, REDIS_URL, DATABASE_URL)
              node        a cluster node; Kafka, Redis and PostgreSQL must all be external
              services    only the embedded Kafka, Redis and PostgreSQL, printing their addresses
                          (the database password goes only to <data dir>/services.env, mode 0600)
              --config    YAML file overriding the shipped fleetmq.yml (default: <data dir>/fleetmq.yml if present)
              import-mosquitto  users, passwords and ACLs from Mosquitto into a running node (--help there)
            Every setting can also be set by its environment variable; see fleetmq.yml.""";

    /** The parsed command line. */
    public record Command(Mode mode, Path configFile, boolean help) {
    }

    /** The file in the data directory where {@code services} writes all it started, secrets included. */
    public static final String SERVICES_ENV = "services.env";
    /** Starts the last line {@code services} prints once everything is up; scripts wait for it. */
    public static final String SERVICES_READY = "# services ready";

    /**
     * Defaults of a standalone node on its embedded Kafka, in place of the shipped ones (the file and
     * the environment still win). That Kafka serves this node alone, so its topics need no
     * partitions to spread routing, connect sequencing or DEVICE queue writes over nodes; one
     * partition puts a produce request's records in one batch instead of one per partition, which
     * costs Kafka, the producers and the consumers less per message and per CONNECT
     * (docs/benchmarks.md, "The publish producer sends when Kafka is free" and "A CONNECT answered
     * before its session was registered").
     */
    static final Map<String, String> EMBEDDED_KAFKA_DEFAULTS = Map.of("kafka.publish-partitions", "1",
            "kafka.session-events-partitions", "1", "kafka.device-persisted-partitions", "1");

    private final Function<String, String> environment;
    private final PrintStream out;

    public Launcher(Function<String, String> environment, PrintStream out) {
        this.environment = environment;
        this.out = out;
    }

    public static Command parse(String... args) {
        Mode mode = Mode.STANDALONE;
        Path config = null;
        boolean modeSeen = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-h", "--help", "help" -> {
                    return new Command(mode, null, true);
                }
                case "--config", "-c" -> {
                    if (i + 1 >= args.length) {
                        throw new ConfigException("--config needs a file name");
                    }
                    config = Path.of(args[++i]);
                }
                default -> {
                    if (a.startsWith("--config=")) {
                        config = Path.of(a.substring("--config=".length()));
                    } else if (!modeSeen && !a.startsWith("-")) {
                        mode = switch (a) {
                            case "standalone" -> Mode.STANDALONE;
                            case "node" -> Mode.NODE;
                            case "services" -> Mode.SERVICES;
                            default -> throw new ConfigException("unknown command '" + a
                                    + "'; expected standalone, node, services or import-mosquitto (--help lists them)");
                        };
                        modeSeen = true;
                    } else {
                        throw new ConfigException("unexpected argument '" + a + "' (--help lists the options)");
                    }
                }
            }
        }
        return new Command(mode, config, false);
    }

    /** Loads the settings of {@code command}: shipped defaults, the config file, the environment. */
    public BrokerConfig configure(Command command) {
        Path file = command.configFile();
        if (file == null) {
            // A copy of fleetmq.yml in the data directory is picked up without --config.
            Settings defaults = Settings.load(null, environment);
            Path candidate = Path.of(defaults.string("broker.data-dir")).resolve("fleetmq.yml");
            if (Files.isRegularFile(candidate)) {
                file = candidate;
            }
        }
        Settings settings = Settings.load(file, environment);
        if (command.mode() == Mode.STANDALONE && settings.string("kafka.bootstrap-servers").isBlank()) {
            settings = Settings.load(file, environment, EMBEDDED_KAFKA_DEFAULTS);
        }
        if (file != null) {
            log.info("Configuration from {} and the environment", file.toAbsolutePath());
        }
        return BrokerConfig.from(settings, hostName());
    }

    /**
     * Runs {@code args}: returns the running node or services, or null after printing help.
     *
     * @throws ConfigException  bad command line or configuration
     * @throws StartupException a dependency or port is unusable
     */
    public AutoCloseable run(String... args) {
        Command command = parse(args);
        if (command.help()) {
            out.println(USAGE);
            return null;
        }
        BrokerConfig config = configure(command);
        if (command.mode() == Mode.SERVICES) {
            return runServices(config);
        }
        return BrokerNode.start(config, command.mode());
    }

    private AutoCloseable runServices(BrokerConfig config) {
        // A service already pointed elsewhere is not started: one Kafka of its own in a process of its
        // own can then be paused or stopped alone, as fault tests and local experiments do.
        boolean kafka = !config.kafkaExternal();
        boolean redis = !config.redisExternal();
        boolean postgres = !config.databaseExternal();
        if (!kafka && !redis && !postgres) {
            throw new ConfigException("services mode has nothing to start: KAFKA_BOOTSTRAP_SERVERS, REDIS_URL and"
                    + " DATABASE_URL all point at external servers");
        }
        EmbeddedServices services = BrokerNode.startEmbedded(config, kafka, redis, postgres);
        Map<String, String> addresses = new LinkedHashMap<>();
        Map<String, String> secrets = new LinkedHashMap<>();
        if (kafka) {
            addresses.put("KAFKA_BOOTSTRAP_SERVERS", services.kafkaBootstrapServers());
        }
        if (redis) {
            addresses.put("REDIS_URL", services.redisUrl());
        }
        if (postgres) {
            addresses.put("DATABASE_URL", services.databaseUrl());
            addresses.put("DATABASE_USER", services.databaseUser());
            secrets.put("DATABASE_PASSWORD", services.databasePassword());
        }
        Path envFile = config.dataDir().resolve(SERVICES_ENV);
        try {
            Map<String, String> all = new LinkedHashMap<>(addresses);
            all.putAll(secrets);
            writeOwnerOnly(envFile, envLines(all));
        } catch (IOException e) {
            services.close();
            throw new StartupException("cannot write " + envFile + ": " + e.getMessage()
                    + " (broker.data-dir, BROKER_DATA_DIR)", e);
        }
        // Standard output often ends up in shared logs and CI output: it gets the addresses as KEY=value
        // lines, ready for `export` or `env`, and only the name of the file that holds the secrets.
        out.print(envLines(addresses));
        out.println(SERVICES_READY + "; addresses and secrets (" + String.join(", ", secrets.keySet())
                + ") in " + envFile.toAbsolutePath() + ", readable by its owner only");
        out.flush();
        log.info("Services ready; addresses written to {}", envFile);
        return services;
    }

    private static String envLines(Map<String, String> values) {
        StringBuilder env = new StringBuilder();
        values.forEach((k, v) -> env.append(k).append('=').append(v).append('\n'));
        return env.toString();
    }

    /**
     * Replaces {@code file} by one only its owner can read (where the file system has POSIX
     * permissions): written to a fresh temporary file, which Java creates with mode 0600, then moved
     * over the old one, so the secret is never in a file others could read, not even for a moment.
     */
    static void writeOwnerOnly(Path file, String text) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
        try {
            if (Files.getFileStore(tmp).supportsFileAttributeView(PosixFileAttributeView.class)) {
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
            }
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private String hostName() {
        String fromEnv = environment.apply("HOSTNAME");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return fromEnv.trim();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "fleetmq";
        }
    }
}
