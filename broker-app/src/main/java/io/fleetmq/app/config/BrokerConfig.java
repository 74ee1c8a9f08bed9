package io.fleetmq.app.config;

import io.fleetmq.embedded.RedisBinary;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.kafka.cluster.ClusterSettings;
import io.fleetmq.persistence.redis.RedisSettings;
import io.fleetmq.persistence.sql.DatabaseSettings;
import io.fleetmq.session.MqttLimits;
import io.fleetmq.transport.limits.ConnectionLimits;
import io.fleetmq.app.security.SecuritySettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * The validated, typed configuration of one node. Built once at start-up from {@link Settings};
 * every check that can fail does so here, with a message naming the setting. {@code settings} is
 * what it was built from: the {@code auth.*} part is built again when the admin API overrides it.
 */
public record BrokerConfig(
        String nodeId,
        Path dataDir,
        Duration shutdownTimeout,
        String bindAddress,
        int ioThreads,
        Listener tcp,
        Listener tls,
        Listener ws,
        Listener wss,
        Path tlsCertFile,
        Path tlsKeyFile,
        int httpPort,
        MqttLimits mqttLimits,
        int connectTimeoutSeconds,
        int maxWriteBufferBytes,
        ConnectionLimits connectionLimits,
        int maxRetainedMessages,
        long maxRetainedBytes,
        KafkaSettings kafka,
        long publishBufferBytes,
        Duration publishBackpressureDelay,
        Duration publishBackpressureMaxWait,
        ClusterSettings cluster,
        Duration loopGiveUpAfter,
        String applicationClientIdPattern,
        int deviceQueueLimit,
        Duration deviceQueueTtl,
        boolean deviceLiveDelivery,
        Duration deviceLiveAckWait,
        Duration applicationRetention,
        long applicationRetentionBytes,
        int applicationSharedPartitions,
        int maxApplicationSessions,
        Duration applicationSharedGrace,
        SecuritySettings security,
        java.util.List<String> webSocketAllowedOrigins,
        RedisSettings redis,
        DatabaseSettings database,
        Embedded embedded,
        Admin admin,
        io.fleetmq.app.security.http.HttpAuthSettings authHttp,
        io.fleetmq.app.security.jwt.JwtSettings jwt,
        ClientCertSettings clientCerts,
        TlsSettings tlsSettings,
        Settings settings) {

    /**
     * One MQTT listener: on or off, its port, the setting that names the port in errors, and
     * whether every connection must start with a PROXY protocol header (behind a load balancer).
     */
    public record Listener(String name, boolean enabled, int port, String portSetting, boolean proxyProtocol) {
    }

    /** Ports of the embedded services in standalone and services mode, and the binary of the embedded Redis. */
    public record Embedded(String host, int kafkaPort, int kafkaControllerPort, int redisPort, int postgresPort,
            RedisBinary redisBinary) {
    }

    /**
     * The admin API: the password of the first admin user (empty: generated) and the lifetime of
     * its bearer tokens.
     */
    public record Admin(String initialPassword, Duration tokenTtl) {
        @Override
        public String toString() {
            return "Admin[initialPassword=" + (initialPassword.isEmpty() ? "" : "***") + ", tokenTtl=" + tokenTtl + "]";
        }
    }

    private static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9._-]{1,100}");

    public boolean kafkaExternal() {
        return !kafka.bootstrapServers().isEmpty();
    }

    public boolean redisExternal() {
        return !redis.url().isEmpty();
    }

    public boolean databaseExternal() {
        return !database.url().isEmpty();
    }

    public static BrokerConfig from(Settings s, String hostName) {
        String nodeId = s.string("broker.node-id");
        if (nodeId.isEmpty()) {
            nodeId = hostName;
        }
        if (!NODE_ID.matcher(nodeId).matches()) {
            throw s.invalid("broker.node-id", nodeId,
                    "is not a valid node id (letters, digits, '.', '_' and '-', at most 100)");
        }
        String dataDirRaw = s.string("broker.data-dir");
        if (dataDirRaw.isEmpty()) {
            throw s.invalid("broker.data-dir", dataDirRaw, "must not be empty");
        }

        Listener tls = listener(s, "tls", "TLS");
        Listener wss = listener(s, "wss", "secure WebSocket");
        Path cert = optionalFile(s, "listeners.tls.cert-file");
        Path key = optionalFile(s, "listeners.tls.key-file");
        if ((tls.enabled() || wss.enabled()) && (cert == null || key == null)) {
            String missing = cert == null ? "listeners.tls.cert-file" : "listeners.tls.key-file";
            throw new ConfigException("setting " + s.describe(missing)
                    + " is required when the TLS or secure WebSocket listener is enabled");
        }

        return new BrokerConfig(
                nodeId,
                Path.of(dataDirRaw).toAbsolutePath().normalize(),
                s.duration("broker.shutdown-timeout"),
                s.string("listeners.bind-address"),
                s.integer("listeners.io-threads", 0, 1024),
                listener(s, "tcp", "TCP"),
                tls,
                listener(s, "ws", "WebSocket"),
                wss,
                cert,
                key,
                s.port("listeners.http.port"),
                new MqttLimits(
                        s.integer("mqtt.receive-maximum", 1, 65_535),
                        s.integer("mqtt.max-packet-size", 16, 268_435_455),
                        s.integer("mqtt.topic-alias-maximum", 0, 65_535),
                        s.integer("mqtt.max-keep-alive", 0, 65_535),
                        s.longValue("mqtt.max-session-expiry", 0, 0xFFFF_FFFFL),
                        s.integer("mqtt.max-queued-messages", 1, 10_000_000),
                        s.integer("mqtt.max-queued-qos0", 0, 10_000_000),
                        s.integer("mqtt.outbound-topic-alias-maximum", 0, 65_535),
                        s.integer("mqtt.max-inflight-messages", 1, 65_535),
                        s.integer("mqtt.max-subscriptions", 1, 10_000_000),
                        bridgeSessions(s)),
                s.integer("mqtt.connect-timeout", 1, 3_600),
                s.integer("mqtt.max-write-buffer", 1_024, 1_073_741_824),
                connectionLimits(s),
                s.integer("mqtt.max-retained-messages", 0, Integer.MAX_VALUE),
                s.longValue("mqtt.max-retained-bytes", 0, Long.MAX_VALUE),
                kafka(s),
                s.longValue("kafka.publish-buffer", 1_048_576, 2_147_483_647L),
                s.duration("mqtt.publish-backpressure-delay"),
                positive(s, "mqtt.publish-backpressure-max-wait"),
                cluster(s, nodeId),
                positive(s, "cluster.loop-give-up-after"),
                pattern(s, "sessions.application-client-id-pattern"),
                s.integer("sessions.device-queue-limit", 1, 10_000_000),
                positive(s, "sessions.device-queue-ttl"),
                s.bool("sessions.device-live-delivery"),
                liveAckWait(s),
                positive(s, "sessions.application-retention"),
                s.longValue("sessions.application-retention-bytes", 1_048_576, Long.MAX_VALUE),
                s.integer("sessions.application-shared-partitions", 1, 1_000),
                s.integer("sessions.max-application-sessions", 0, 1_000_000),
                positive(s, "sessions.application-shared-grace"),
                security(s),
                origins(s),
                new RedisSettings(s.string("redis.url"), positive(s, "redis.command-timeout")),
                new DatabaseSettings(
                        s.string("database.url"),
                        s.string("database.user"),
                        s.string("database.password"),
                        s.integer("database.max-pool-size", 1, 1_000),
                        positive(s, "database.connect-timeout")),
                new Embedded(
                        s.string("embedded.host"),
                        s.port("embedded.kafka-port"),
                        s.port("embedded.kafka-controller-port"),
                        s.port("embedded.redis-port"),
                        s.port("embedded.postgres-port"),
                        redisBinary(s)),
                new Admin(s.string("admin.password"), positive(s, "admin.token-ttl")),
                io.fleetmq.app.security.http.HttpAuthSettings.from(s),
                io.fleetmq.app.security.jwt.JwtSettings.from(s),
                ClientCertSettings.from(s),
                TlsSettings.from(s),
                s);
    }

    private static RedisBinary redisBinary(Settings s) {
        String raw = s.string("embedded.redis-binary");
        try {
            return RedisBinary.of(raw);
        } catch (IllegalArgumentException e) {
            throw s.invalid("embedded.redis-binary", raw, e.getMessage());
        }
    }

    /** The {@code auth.*} settings of MQTT clients' authentication, checked. */
    public static SecuritySettings security(Settings s) {
        String anonymous = s.string("auth.allow-anonymous");
        SecuritySettings.Anonymous policy = switch (anonymous) {
            case "auto" -> SecuritySettings.Anonymous.AUTO;
            case "true" -> SecuritySettings.Anonymous.TRUE;
            case "false" -> SecuritySettings.Anonymous.FALSE;
            default -> throw s.invalid("auth.allow-anonymous", anonymous, "must be auto, true or false");
        };
        String deny = s.string("auth.deny-action");
        boolean disconnect = switch (deny) {
            case "ignore" -> false;
            case "disconnect" -> true;
            default -> throw s.invalid("auth.deny-action", deny, "must be ignore or disconnect");
        };
        int threads = s.integer("auth.threads", 0, 1_024);
        return new SecuritySettings(providers(s), policy, rules(s, "auth.anonymous-publish"), rules(s, "auth.anonymous-subscribe"),
                disconnect, threads == 0 ? Math.max(2, Runtime.getRuntime().availableProcessors()) : threads,
                s.integer("auth.max-pending", 1, 1_000_000), s.duration("auth.max-wait"), s.duration("auth.cache-ttl"),
                positive(s, "auth.refused-retention"));
    }

    /** Origins such as https://console.example.com, separated by commas. */
    private static java.util.List<String> origins(Settings s) {
        String raw = s.string("listeners.ws.allowed-origins");
        java.util.List<String> origins = new java.util.ArrayList<>();
        for (String part : raw.split(",")) {
            String origin = part.strip();
            if (origin.isEmpty()) {
                continue;
            }
            if (!origin.matches("(?i)(https?://[^/\\s]+|null)")) {
                throw s.invalid("listeners.ws.allowed-origins", raw, "'" + origin
                        + "' is not an origin (scheme://host[:port], like https://console.example.com)");
            }
            origins.add(origin);
        }
        return origins;
    }

    /** Provider names separated by commas, each known and named once. */
    private static java.util.List<String> providers(Settings s) {
        String raw = s.string("auth.providers");
        java.util.List<String> names = new java.util.ArrayList<>();
        for (String part : raw.split(",")) {
            String name = part.strip().toLowerCase(java.util.Locale.ROOT);
            if (name.isEmpty()) {
                continue;
            }
            if (!SecuritySettings.PROVIDERS.contains(name)) {
                throw s.invalid("auth.providers", raw, "'" + name + "' is not a provider (one of "
                        + String.join(", ", SecuritySettings.PROVIDERS) + ")");
            }
            if (names.contains(name)) {
                throw s.invalid("auth.providers", raw, "names '" + name + "' twice");
            }
            names.add(name);
        }
        return names;
    }

    /** Topic filters separated by commas, each a valid rule. */
    private static java.util.List<String> rules(Settings s, String key) {
        String raw = s.string(key);
        java.util.List<String> rules = new java.util.ArrayList<>();
        for (String part : raw.split(",")) {
            String rule = part.strip();
            if (rule.isEmpty()) {
                continue;
            }
            String problem = io.fleetmq.core.security.TopicRules.validate(rule);
            if (problem != null) {
                throw s.invalid(key, raw, "rule '" + rule + "': " + problem);
            }
            rules.add(rule);
        }
        return rules;
    }

    private static ConnectionLimits connectionLimits(Settings s) {
        return new ConnectionLimits(
                s.integer("mqtt.max-client-id-length", 1, 65_535),
                s.integer("mqtt.max-topic-length", 1, 65_535),
                s.integer("mqtt.max-topic-levels", 1, 65_535),
                s.integer("mqtt.max-user-properties", 0, 1_000_000),
                s.integer("mqtt.max-user-property-bytes", 0, 268_435_455),
                positive(s, "mqtt.packet-timeout"),
                s.longValue("mqtt.max-partial-packet-bytes", 1_024, Long.MAX_VALUE),
                s.integer("mqtt.max-connections", 1, 100_000_000),
                s.integer("mqtt.max-connection-rate", 1, 1_000_000),
                (int) Math.max(1, positive(s, "mqtt.tcp-keepalive").toSeconds()),
                s.integer("mqtt.max-publish-rate", 0, 100_000_000),
                s.longValue("mqtt.max-publish-bytes-rate", 0, Long.MAX_VALUE / 1_000_000_000L),
                publishRateDisconnect(s));
    }

    private static boolean publishRateDisconnect(Settings s) {
        String raw = s.string("mqtt.publish-rate-exceeded");
        return switch (raw) {
            case "throttle" -> false;
            case "disconnect" -> true;
            default -> throw s.invalid("mqtt.publish-rate-exceeded", raw, "must be throttle or disconnect");
        };
    }

    private static KafkaSettings kafka(Settings s) {
        short replication = (short) s.integer("kafka.replication-factor", 1, 32);
        int minInsync = s.integer("kafka.min-insync-replicas", 1, 32);
        if (minInsync > replication) {
            // Kafka would refuse every acks=all write: no PUBLISH could ever be acknowledged.
            throw s.invalid("kafka.min-insync-replicas", s.string("kafka.min-insync-replicas"),
                    "must not exceed kafka.replication-factor (" + replication + ")");
        }
        return new KafkaSettings(
                s.string("kafka.bootstrap-servers"),
                s.string("kafka.topic-prefix"),
                s.integer("kafka.publish-partitions", 1, 10_000),
                s.integer("kafka.session-events-partitions", 1, 10_000),
                s.integer("kafka.device-persisted-partitions", 1, 10_000),
                replication,
                positive(s, "kafka.request-timeout"),
                minInsync,
                s.integer("mqtt.max-packet-size", 16, 268_435_455),
                kafkaClientSecurity(s),
                compressionType(s));
    }

    private static String compressionType(Settings s) {
        String raw = s.string("kafka.compression-type").trim().toLowerCase(java.util.Locale.ROOT);
        if (!KafkaSettings.COMPRESSION_TYPES.contains(raw)) {
            throw s.invalid("kafka.compression-type", s.string("kafka.compression-type"),
                    "must be one of " + String.join(", ", KafkaSettings.COMPRESSION_TYPES));
        }
        return raw;
    }

    /**
     * TLS and SASL towards Kafka: security protocol, a CA in PEM, SASL PLAIN or SCRAM with a user
     * name and password, and any other client property from a file.
     */
    static java.util.Map<String, String> kafkaClientSecurity(Settings s) {
        java.util.Map<String, String> props = new java.util.LinkedHashMap<>();
        String protocol = s.string("kafka.security-protocol").toUpperCase(java.util.Locale.ROOT);
        if (!java.util.List.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL").contains(protocol)) {
            throw s.invalid("kafka.security-protocol", s.string("kafka.security-protocol"),
                    "must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL");
        }
        props.put("security.protocol", protocol);
        String ca = s.string("kafka.ssl-ca-file");
        if (!ca.isEmpty()) {
            if (!Files.isReadable(Path.of(ca))) {
                throw s.invalid("kafka.ssl-ca-file", ca, "is not a readable file");
            }
            props.put("ssl.truststore.type", "PEM");
            props.put("ssl.truststore.location", Path.of(ca).toAbsolutePath().toString());
        }
        String mechanism = s.string("kafka.sasl-mechanism").toUpperCase(java.util.Locale.ROOT);
        if (protocol.startsWith("SASL_")) {
            String user = s.string("kafka.sasl-username");
            String password = s.string("kafka.sasl-password");
            String module = switch (mechanism) {
                case "PLAIN" -> "org.apache.kafka.common.security.plain.PlainLoginModule";
                case "SCRAM-SHA-256", "SCRAM-SHA-512" -> "org.apache.kafka.common.security.scram.ScramLoginModule";
                default -> null;
            };
            if (module == null) {
                throw s.invalid("kafka.sasl-mechanism", s.string("kafka.sasl-mechanism"),
                        "must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with " + protocol);
            }
            if (user.isEmpty() || password.isEmpty()) {
                throw new ConfigException("settings " + s.describe("kafka.sasl-username") + " and "
                        + s.describe("kafka.sasl-password") + " are required with SASL");
            }
            props.put("sasl.mechanism", mechanism);
            props.put("sasl.jaas.config", module + " required username=\"" + jaasQuoted(user)
                    + "\" password=\"" + jaasQuoted(password) + "\";");
        } else if (!mechanism.isEmpty()) {
            throw s.invalid("kafka.sasl-mechanism", s.string("kafka.sasl-mechanism"),
                    "needs kafka.security-protocol SASL_PLAINTEXT or SASL_SSL");
        }
        String file = s.string("kafka.client-properties-file");
        if (!file.isEmpty()) {
            java.util.Properties extra = new java.util.Properties();
            try (java.io.Reader in = Files.newBufferedReader(Path.of(file))) {
                extra.load(in);
            } catch (java.io.IOException | RuntimeException e) {
                throw s.invalid("kafka.client-properties-file", file, "cannot be read: " + e.getMessage());
            }
            for (String key : new java.util.TreeSet<>(extra.stringPropertyNames())) {
                String why = NODE_DECIDES.get(key);
                if (why != null) {
                    throw s.invalid("kafka.client-properties-file", file, "sets " + key + ", which the node decides: " + why);
                }
                props.put(key, extra.getProperty(key));
            }
        }
        return props;
    }

    /**
     * Kafka client settings a {@code kafka.client-properties-file} may not set, since a promise of the
     * broker rests on them; with why. Every other one, tuning included, wins over the node's own.
     */
    static final java.util.Map<String, String> NODE_DECIDES = java.util.Map.ofEntries(
            java.util.Map.entry("acks", "a PUBACK waits until every in-sync replica stored the message (acks=all)"),
            java.util.Map.entry("enable.idempotence", "retries must not duplicate or reorder a publisher's messages"),
            java.util.Map.entry("transactional.id", "the node's producers are not transactional"),
            java.util.Map.entry("isolation.level", "consumers read only committed records"),
            java.util.Map.entry("enable.auto.commit", "offsets are committed once the records are handled"),
            java.util.Map.entry("auto.offset.reset", "a new consumer group reads from the beginning"),
            java.util.Map.entry("group.id", "each consumer's group is part of the cluster's design"),
            java.util.Map.entry("group.instance.id", "each consumer's group is part of the cluster's design"),
            java.util.Map.entry("client.id", "it names the node and the client in Kafka's metrics"),
            java.util.Map.entry("bootstrap.servers", "set KAFKA_BOOTSTRAP_SERVERS"),
            java.util.Map.entry("key.serializer", "records are encoded by the node"),
            java.util.Map.entry("value.serializer", "records are encoded by the node"),
            java.util.Map.entry("key.deserializer", "records are decoded by the node"),
            java.util.Map.entry("value.deserializer", "records are decoded by the node"),
            java.util.Map.entry("max.poll.records", "a DEVICE queue recognises a message routed again within one batch"));

    private static String jaasQuoted(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private static String pattern(Settings s, String key) {
        String raw = s.string(key);
        try {
            java.util.regex.Pattern.compile(raw);
        } catch (java.util.regex.PatternSyntaxException e) {
            throw s.invalid(key, raw, "is not a valid regular expression: " + e.getDescription());
        }
        return raw;
    }

    private static ClusterSettings cluster(Settings s, String nodeId) {
        Duration heartbeat = positive(s, "cluster.heartbeat-interval");
        Duration timeout = positive(s, "cluster.node-timeout");
        if (timeout.compareTo(heartbeat.multipliedBy(2)) < 0) {
            throw s.invalid("cluster.node-timeout", s.string("cluster.node-timeout"),
                    "must be at least twice cluster.heartbeat-interval (" + s.string("cluster.heartbeat-interval") + ")");
        }
        String reference = s.string("cluster.shutdown-server-reference");
        return new ClusterSettings(nodeId, heartbeat, timeout, s.integer("cluster.downlink-partitions", 1, 1_000),
                positive(s, "cluster.connect-timeout"), reference.isEmpty() ? null : reference);
    }

    private static Listener listener(Settings s, String name, String label) {
        String portKey = "listeners." + name + ".port";
        return new Listener(label, s.bool("listeners." + name + ".enabled"), s.port(portKey), s.describe(portKey),
                s.bool("listeners." + name + ".proxy-protocol"));
    }

    private static Path optionalFile(Settings s, String key) {
        String raw = s.string(key);
        if (raw.isEmpty()) {
            return null;
        }
        Path path = Path.of(raw);
        if (!Files.isReadable(path)) {
            throw s.invalid(key, raw, "is not a readable file");
        }
        return path;
    }

    /** Which clients get a persistent session though they ask for expiry 0 (Mosquitto's bridge), and how long. */
    private static io.fleetmq.session.BridgeSessions bridgeSessions(Settings s) {
        String pattern = pattern(s, "sessions.bridge-client-id-pattern");
        long seconds = positive(s, "sessions.bridge-session-expiry").toSeconds();
        if (seconds < 1 || seconds > 0xFFFF_FFFFL) {
            throw s.invalid("sessions.bridge-session-expiry", s.string("sessions.bridge-session-expiry"),
                    "must be between 1 second and 4294967295 seconds");
        }
        return io.fleetmq.session.BridgeSessions.of(pattern, seconds);
    }

    /** At most 10 s: a batch of {@code device.persisted}, and with it every client of its partition, waits this long. */
    private static Duration liveAckWait(Settings s) {
        String key = "sessions.device-live-ack-wait";
        Duration d = positive(s, key);
        if (d.compareTo(Duration.ofSeconds(10)) > 0) {
            throw s.invalid(key, s.string(key), "must be at most 10s");
        }
        return d;
    }

    private static Duration positive(Settings s, String key) {
        Duration d = s.duration(key);
        if (d.isZero()) {
            throw s.invalid(key, s.string(key), "must be greater than zero");
        }
        return d;
    }
}
