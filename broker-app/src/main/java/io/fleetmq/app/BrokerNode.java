package io.fleetmq.app;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.app.config.ClientCertSettings;
import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.http.AdminApi;
import io.fleetmq.app.http.AdminHttpServer;
import io.fleetmq.app.http.InitialAdmin;
import io.fleetmq.app.http.SecurityStores;
import io.fleetmq.app.security.AuthSetup;
import io.fleetmq.app.security.MqttSecurity;
import io.fleetmq.app.security.ProviderFactory;
import io.fleetmq.app.security.SecuritySettings;
import io.fleetmq.kafka.security.SecurityChanges;
import io.fleetmq.persistence.security.BlockedClients;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.app.metrics.DependencyMeters;
import io.fleetmq.app.metrics.Metrics;
import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.health.Readiness;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.persistence.auth.PasswordHashes;
import io.fleetmq.embedded.EmbeddedServiceException;
import io.fleetmq.embedded.EmbeddedServices;
import io.fleetmq.embedded.EmbeddedServicesConfig;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.KafkaHealthCheck;
import io.fleetmq.kafka.KafkaSettings;
import io.fleetmq.kafka.TopicLayout;
import io.fleetmq.kafka.TopicLayoutException;
import io.fleetmq.persistence.redis.Redis;
import io.fleetmq.persistence.redis.RedisSettings;
import io.fleetmq.persistence.sql.Database;
import io.fleetmq.persistence.sql.DatabaseSettings;
import io.fleetmq.transport.BoundListener;
import io.fleetmq.transport.EventLoops;
import io.fleetmq.transport.ListenerBindException;
import io.fleetmq.transport.Listeners;
import io.fleetmq.transport.limits.NodeLimits;
import io.fleetmq.transport.proxy.ProxyRefusals;
import io.fleetmq.transport.mqtt.MqttChannelInitializer;
import io.micrometer.core.instrument.Gauge;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.fleetmq.transport.tls.ClientCertificates;
import io.fleetmq.transport.tls.ServerTls;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLException;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running broker node, wired by plain constructors. {@link #start} brings it up in dependency
 * order and, on any failure, stops whatever already started; {@link #close} stops it in reverse.
 */
public final class BrokerNode implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BrokerNode.class);

    private final BrokerConfig config;
    private final Readiness readiness = new Readiness();
    /** Everything started so far, closed last-started-first. */
    private final Deque<Stoppable> started = new ArrayDeque<>();
    private final List<BoundListener> mqttListeners = new ArrayList<>();
    /** The TCP listener's pipeline, which in-process connections share (null while TCP is disabled). */
    private MqttChannelInitializer tcpInitializer;
    /** The node's event loops, those of in-process connections included. */
    private EventLoops loops;
    private final AtomicBoolean closed = new AtomicBoolean();
    private EmbeddedServices embedded;
    private AdminHttpServer http;
    private volatile SecurityChanges securityChanges;
    private AdminApi adminApi;
    private final PasswordHashes passwordHashes = new PasswordHashes();
    /** The admin API's writes are announced to every node once Kafka is there (the API waits for it). */
    private final SecurityChange.Announcer adminAnnouncer = change -> {
        SecurityChanges to = securityChanges;
        if (to != null) {
            to.announce(change);
        } else {
            log.warn("Security change {} {} made before the node could announce it; other nodes see it when their "
                    + "caches expire", change.kind(), change.id());
        }
    };
    private Metrics metrics;
    private KafkaSettings kafkaSettings;
    private RedisSettings redisSettings;
    private DatabaseSettings databaseSettings;

    private record Stoppable(String name, AutoCloseable resource) {
    }

    private BrokerNode(BrokerConfig config) {
        this.config = config;
    }

    /**
     * Starts a node in {@link Mode#STANDALONE} or {@link Mode#NODE} and returns once it is ready.
     *
     * @throws ConfigException  a setting is missing or wrong (message names it)
     * @throws StartupException a dependency or a port is unusable (message names the setting)
     */
    public static BrokerNode start(BrokerConfig config, Mode mode) {
        if (mode == Mode.SERVICES) {
            throw new IllegalArgumentException("services mode does not run a node");
        }
        BrokerNode node = new BrokerNode(config);
        try {
            node.startAll(mode);
            return node;
        } catch (RuntimeException | Error e) {
            node.close();
            throw e;
        }
    }

    private void startAll(Mode mode) {
        long t0 = System.nanoTime();
        if (mode == Mode.NODE) {
            // Refuse before anything binds or starts.
            requireExternal(config.kafkaExternal(), "Kafka", "kafka.bootstrap-servers (KAFKA_BOOTSTRAP_SERVERS)");
            requireExternal(config.redisExternal(), "Redis", "redis.url (REDIS_URL)");
            requireExternal(config.databaseExternal(), "PostgreSQL", "database.url (DATABASE_URL)");
            warnIfUnreplicated(config.kafka());
        }
        log.info("Starting FleetMQ node {} in {} mode, data in {}", config.nodeId(),
                mode.name().toLowerCase(java.util.Locale.ROOT), config.dataDir());

        metrics = new Metrics(config.nodeId());
        started.push(new Stoppable("metrics", metrics));
        loops = new EventLoops(config.ioThreads());
        started.push(new Stoppable("event loops", loops));

        // The admin port comes first so /health/live answers, and /health/ready says "starting",
        // while the dependencies come up; its API answers 503 until PostgreSQL is there.
        adminApi = new AdminApi(adminAnnouncer, config.admin().tokenTtl(), passwordHashes);
        http = bind("listeners.http.port (HTTP_PORT)",
                () -> AdminHttpServer.start(config.bindAddress(), config.httpPort(), readiness, metrics, adminApi));
        started.push(new Stoppable("admin HTTP", http));
        DependencyMeters.registerReady(metrics.registry(), readiness);
        log.info("Listening for HTTP (admin, /metrics, /health) on {}", http.address());
        // A port in use is told now, not after the dependencies came up (many seconds later); the
        // listeners bind for real once the node can serve.
        checkMqttPortsFree();

        resolveDependencies();

        KafkaClients kafka = new KafkaClients(kafkaSettings, config.nodeId()).meters(metrics.registry());
        started.push(new Stoppable("Kafka client meters", kafka::closeMeters));
        Admin admin = kafka.admin();
        started.push(new Stoppable("Kafka admin client", admin));
        BrokerTopics topics = new BrokerTopics(kafkaSettings.topicPrefix());
        KafkaHealthCheck kafkaHealth = new KafkaHealthCheck(admin, kafkaSettings);
        HealthStatus kafkaStatus = kafkaHealth.check();
        if (!kafkaStatus.up()) {
            throw new StartupException("Kafka at " + kafkaSettings.bootstrapServers()
                    + " is unreachable (kafka.bootstrap-servers, KAFKA_BOOTSTRAP_SERVERS): " + kafkaStatus.detail(), null);
        }
        dependency(kafkaHealth, Readiness.Impact.REQUIRED);
        try {
            new TopicLayout(admin, kafkaSettings, topics).ensure();
        } catch (TopicLayoutException e) {
            // A message that names its settings already says what to change; the others are about the layout.
            throw new StartupException(e.getMessage().contains("(MQTT_MAX_PACKET_SIZE)")
                    || e.getMessage().contains("(KAFKA_MIN_INSYNC_REPLICAS)")
                    ? e.getMessage() : e.getMessage() + " (kafka.topic-prefix, KAFKA_TOPIC_PREFIX)", e);
        } catch (IllegalStateException e) {
            throw new StartupException("Kafka at " + kafkaSettings.bootstrapServers() + ": " + e.getMessage()
                    + " (kafka.bootstrap-servers, KAFKA_BOOTSTRAP_SERVERS)", e);
        }

        Database database = dependency("database.url (DATABASE_URL)", () -> Database.open(databaseSettings, metrics.registry()));
        started.push(new Stoppable("database pool", database));
        // PostgreSQL only holds configuration: without it the node serves MQTT unchanged.
        dependency(database.healthCheck(), Readiness.Impact.DEGRADES);

        Redis redis = dependency("redis.url (REDIS_URL)", () -> Redis.connect(redisSettings, metrics.registry()));
        started.push(new Stoppable("Redis connection", redis));
        // Without Redis, delivery from DEVICE queues pauses and resumes; everything else goes on.
        dependency(redis.healthCheck(), Readiness.Impact.DEGRADES);

        MqttSecurity security = mqttSecurity(database);
        ProviderFactory checks = new ProviderFactory(new Credentials(database.dataSource()),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), () -> false, java.time.Clock.systemUTC());
        adminApi.authSettings(config.settings(), setup -> ProviderFactory.closeAll(checks.build(setup)));
        started.push(new Stoppable("MQTT security", security));
        securityChanges = new SecurityChanges(kafka, topics, metrics.registry());
        started.push(new Stoppable("security announcements", securityChanges));
        connectAdminApi(database);

        LocalNode local = new LocalNode();
        // The node's recent drops outlive its incarnations, like its meters.
        io.fleetmq.session.RecentDrops recentDrops = new io.fleetmq.session.RecentDrops();
        Incarnations incarnations = new Incarnations(
                previous -> new Messaging(config, kafka, admin, redis, metrics.registry(), previous, security, local,
                        recentDrops),
                metrics.registry());
        try {
            incarnations.start();
        } catch (TopicLayoutException e) {
            // This node's own topics (downlink.<node>, node.<node>) exist already with too small limits.
            throw new StartupException(e.getMessage(), e);
        }
        started.push(new Stoppable("messaging", incarnations));
        adminApi.sessions(() -> {
            // A fenced incarnation's copies are stale and it can no longer reach other nodes: 503 until replaced.
            Messaging current = incarnations.current();
            return current == null || current.membership().fenced() ? null : current.sessionsView();
        });
        dependency(incarnations.clusterHealth(), Readiness.Impact.REQUIRED);
        // Not ready once a background loop gave up; the incarnation then fences itself and is replaced.
        readiness.register(incarnations.loopsHealth(), Readiness.Impact.REQUIRED);
        // Not ready while an operator has the node drained, so load balancers send clients elsewhere.
        readiness.register(local.health(), Readiness.Impact.REQUIRED);
        AdminMessaging adminMessaging = new AdminMessaging(incarnations, config);
        adminApi.retainedMessages(adminMessaging);
        adminApi.clusterNodes(adminMessaging);

        startOperations(kafka, admin, topics, incarnations, recentDrops);

        bindMqttListeners(loops, incarnations.connectionHandlers());
        http.webSocketPorts(mqttPort("WebSocket"), mqttPort("secure WebSocket"));
        mqttListeners.stream().filter(l -> l.name().equals("TCP")).findFirst()
                .ifPresent(l -> local.address(l.address().getHostString() + ":" + l.port()));

        readiness.started();
        double seconds = (System.nanoTime() - t0) / 1e9;
        Gauge.builder("fleetmq.startup.seconds", () -> seconds)
                .description("Time from process start of the node to ready")
                .register(metrics.registry());
        log.info("FleetMQ node {} ready in {} s", config.nodeId(), String.format(java.util.Locale.ROOT, "%.1f", seconds));
    }

    /**
     * The MQTT clients' authentication and authorization, with the overrides of the {@code auth.*}
     * settings stored through the admin API (as configured when PostgreSQL cannot be read now: they
     * are read again every 30 s). Says plainly at start when anonymous clients are refused because a
     * listener is reachable from the network.
     */
    private MqttSecurity mqttSecurity(Database database) {
        io.fleetmq.persistence.security.RuntimeSettings stored =
                new io.fleetmq.persistence.security.RuntimeSettings(database.dataSource());
        MqttSecurity.SetupSource source = new MqttSecurity.SetupSource() {
            @Override
            public java.util.Map<String, String> stored() {
                return stored.all(AuthSetup.PREFIX);
            }

            @Override
            public AuthSetup setup(java.util.Map<String, String> overrides) {
                return AuthSetup.of(config.settings(), overrides);
            }
        };
        java.util.function.BooleanSupplier databaseAway = databaseAway(database);
        ProviderFactory factory = new ProviderFactory(new Credentials(database.dataSource()), metrics.registry(),
                databaseAway, java.time.Clock.systemUTC());
        AuthSetup setup = startingSetup(source);
        SecuritySettings settings = setup.security();
        boolean loopbackOnly = SecuritySettings.loopbackOnly(config.bindAddress());
        boolean anonymous = settings.anonymousAllowed(config.bindAddress());
        if (settings.allowAnonymous() == SecuritySettings.Anonymous.AUTO && !anonymous) {
            log.warn("MQTT listeners are bound to {}, not a loopback address: clients without a credential are "
                    + "refused. Create credentials through the admin API (POST /api/v1/credentials), or set "
                    + "MQTT_ALLOW_ANONYMOUS=true to let anyone connect.", config.bindAddress());
        } else if (anonymous && !loopbackOnly) {
            log.warn("MQTT_ALLOW_ANONYMOUS=true: any client that reaches {} may connect without a credential",
                    config.bindAddress());
        }
        return new MqttSecurity(setup, config.bindAddress(), new Credentials(database.dataSource()),
                new BlockedClients(database.dataSource()), new RefusedConnections(database.dataSource()),
                metrics.registry(), java.time.Clock.systemUTC(), factory, source, databaseAway);
    }

    /**
     * The configuration with the stored overrides when they can be read and applied; otherwise the
     * configuration alone (a node must start even when an override names a file it lacks).
     */
    private AuthSetup startingSetup(MqttSecurity.SetupSource source) {
        AuthSetup configured = AuthSetup.of(config.settings(), java.util.Map.of());
        java.util.Map<String, String> overrides;
        try {
            overrides = source.stored();
        } catch (RuntimeException e) {
            log.warn("Authentication settings stored through the admin API not read ({}); starting with the "
                    + "configuration's, and reading them again every 30 s", e.getMessage());
            return configured;
        }
        if (overrides.isEmpty()) {
            return configured;
        }
        try {
            AuthSetup setup = source.setup(overrides);
            log.info("Authentication settings overridden through the admin API: {}", overrides.keySet());
            return setup;
        } catch (RuntimeException e) {
            log.error("Authentication settings stored through the admin API not applied ({}); starting with the "
                    + "configuration's", e.getMessage());
            return configured;
        }
    }

    /** Whether the node's health check last found PostgreSQL away (checked again when older than 2 s). */
    private java.util.function.BooleanSupplier databaseAway(Database database) {
        String name = database.healthCheck().name();
        return () -> readiness.lastKnown(name, java.time.Duration.ofSeconds(2)).map(status -> !status.up()).orElse(false);
    }

    /**
     * Statistics and recent drops of every node, for the admin API: sampled every
     * {@code admin.stats-interval} and exchanged through the {@code ops} topic.
     */
    private void startOperations(KafkaClients kafka, Admin admin, BrokerTopics topics, Incarnations incarnations,
            io.fleetmq.session.RecentDrops recentDrops) {
        java.time.Duration interval = io.fleetmq.app.ops.StatsSettings.interval(config.settings());
        io.fleetmq.app.ops.Sampler sampler = new io.fleetmq.app.ops.Sampler(metrics.registry(),
                new io.fleetmq.app.ops.Sampler.Gauges() {
                    @Override
                    public long connections() {
                        Messaging m = incarnations.current();
                        return m == null ? 0 : m.connections();
                    }

                    @Override
                    public long sessions() {
                        Messaging m = incarnations.current();
                        return m == null ? 0 : m.sessions().size();
                    }

                    @Override
                    public long subscriptions() {
                        Messaging m = incarnations.current();
                        return m == null ? 0 : m.localSubscriptions();
                    }
                });
        io.fleetmq.app.ops.OpsExchange exchange = new io.fleetmq.app.ops.OpsExchange(kafka, topics, config.nodeId(),
                interval, sampler, recentDrops);
        started.push(new Stoppable("operations reports", exchange));
        try {
            exchange.start(admin);
        } catch (IllegalStateException e) {
            throw new StartupException(e.getMessage() + " (kafka.bootstrap-servers, KAFKA_BOOTSTRAP_SERVERS)", e);
        }
        adminApi.operations(new Operations(exchange, incarnations, admin, topics, kafkaSettings.requestTimeout()));
    }

    /** Where changes of credentials and blocked clients are announced to every node. */
    public SecurityChanges securityChanges() {
        return securityChanges;
    }

    /**
     * The admin API on PostgreSQL, with the first admin user created if there is none. The data
     * directory receives a generated initial password in every mode (in node mode it holds nothing
     * else unless configured).
     */
    private void connectAdminApi(Database database) {
        SecurityStores stores = SecurityStores.on(database.dataSource());
        InitialAdmin initialAdmin = new InitialAdmin(stores.adminUsers(), passwordHashes,
                config.admin().initialPassword(), config.dataDir());
        initialAdmin.ensure();
        adminApi.connect(stores, initialAdmin);
    }

    /** Registers a health check for readiness and as {@code fleetmq_dependency_up{dependency=...}}. */
    private void dependency(io.fleetmq.core.health.HealthCheck check, Readiness.Impact impact) {
        readiness.register(check, impact);
        DependencyMeters.register(metrics.registry(), readiness, check.name(), impact);
    }

    /** Picks, per dependency, the external server from the configuration or an embedded one. */
    private void resolveDependencies() {
        boolean needKafka = !config.kafkaExternal();
        boolean needRedis = !config.redisExternal();
        boolean needPostgres = !config.databaseExternal();
        if (needKafka || needRedis || needPostgres) {
            embedded = startEmbedded(config, needKafka, needRedis, needPostgres);
            started.push(new Stoppable("embedded services", embedded));
        }
        kafkaSettings = needKafka ? withBootstrap(config.kafka(), embedded.kafkaBootstrapServers()) : config.kafka();
        redisSettings = needRedis
                ? new RedisSettings(embedded.redisUrl(), config.redis().commandTimeout()) : config.redis();
        DatabaseSettings db = config.database();
        databaseSettings = needPostgres
                ? new DatabaseSettings(embedded.databaseUrl(), embedded.databaseUser(), embedded.databasePassword(),
                        db.maxPoolSize(), db.connectTimeout())
                : db;
    }

    /** Starts the embedded services {@code config} asks for; shared with services mode. */
    static EmbeddedServices startEmbedded(BrokerConfig config, boolean kafka, boolean redis, boolean postgres) {
        BrokerConfig.Embedded e = config.embedded();
        try {
            return EmbeddedServices.start(new EmbeddedServicesConfig(config.dataDir(), e.host(),
                    kafka, e.kafkaPort(), e.kafkaControllerPort(), redis, e.redisPort(), postgres, e.postgresPort(),
                    e.redisBinary()));
        } catch (EmbeddedServiceException ex) {
            throw new StartupException(ex.getMessage() + " (see embedded.* settings, EMBEDDED_*)", ex);
        }
    }

    private static KafkaSettings withBootstrap(KafkaSettings k, String bootstrap) {
        return new KafkaSettings(bootstrap, k.topicPrefix(), k.publishPartitions(), k.sessionEventPartitions(),
                k.devicePersistedPartitions(), k.replicationFactor(), k.requestTimeout(), k.minInsyncReplicas(),
                k.maxPacketSize(), java.util.Map.of(), k.compressionType());
    }

    /**
     * A cluster whose topics live on one Kafka replica loses acknowledged messages with that
     * broker's disk; a production cluster sets both values below (the defaults fit one Kafka broker).
     */
    private static void warnIfUnreplicated(KafkaSettings k) {
        if (k.replicationFactor() < 3 || k.minInsyncReplicas() < 2) {
            log.warn("Kafka topics are created with replication factor {} and min.insync.replicas {}: an"
                    + " acknowledged PUBLISH is lost if a single Kafka broker fails. A production cluster sets"
                    + " kafka.replication-factor (KAFKA_REPLICATION_FACTOR) to 3 and kafka.min-insync-replicas"
                    + " (KAFKA_MIN_INSYNC_REPLICAS) to 2", k.replicationFactor(), k.minInsyncReplicas());
        }
    }

    private static void requireExternal(boolean present, String what, String setting) {
        if (!present) {
            throw new ConfigException("node mode needs an external " + what + ": set " + setting);
        }
    }

    /**
     * Binds each enabled MQTT listener's address once and lets it go: the usual start-up mistake (a
     * port another process holds) fails the start at once with the setting named. Port 0 (any free
     * port) is not checked.
     */
    private void checkMqttPortsFree() {
        for (BrokerConfig.Listener l : List.of(config.tcp(), config.tls(), config.ws(), config.wss())) {
            if (!l.enabled() || l.port() == 0) {
                continue;
            }
            bind(l.portSetting(), () -> {
                try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
                    probe.setReuseAddress(true);
                    probe.bind(new java.net.InetSocketAddress(config.bindAddress(), l.port()));
                    return null;
                } catch (java.io.IOException e) {
                    throw new ListenerBindException(l.name(), config.bindAddress(), l.port(), e);
                }
            });
        }
    }

    private void bindMqttListeners(EventLoops loops, java.util.function.Supplier<io.netty.channel.ChannelHandler> handlers) {
        boolean anySecure = config.tls().enabled() || config.wss().enabled();
        ServerTls tls = anySecure ? serverTls() : null;
        NodeLimits limits = new NodeLimits(config.connectionLimits(), metrics.registry()); // shared by the listeners
        ProxyRefusals proxyRefusals = new ProxyRefusals(metrics.registry());
        io.micrometer.core.instrument.Counter[] disconnects =
                io.fleetmq.app.metrics.ConnectionMeters.disconnectCounters(metrics.registry());
        for (BrokerConfig.Listener l : List.of(config.tcp(), config.tls(), config.ws(), config.wss())) {
            if (!l.enabled()) {
                log.info("{} listener disabled", l.name());
                continue;
            }
            boolean secure = l == config.tls() || l == config.wss();
            boolean webSocket = l == config.ws() || l == config.wss();
            MqttChannelInitializer initializer = new MqttChannelInitializer(secure ? tls : null, webSocket,
                    config.mqttLimits().maximumPacketSize(), config.maxWriteBufferBytes(), handlers, limits)
                    .allowedOrigins(config.webSocketAllowedOrigins())
                    .proxyProtocol(l.proxyProtocol() ? proxyRefusals : null)
                    .observer(new io.fleetmq.app.metrics.ConnectionMeters(metrics.registry(),
                            webSocket ? (secure ? "wss" : "ws") : (secure ? "tls" : "tcp"), disconnects).handlers());
            if (l == config.tcp()) {
                tcpInitializer = initializer;
            }
            BoundListener bound = bind(l.portSetting(),
                    () -> Listeners.bind(loops, l.name(), config.bindAddress(), l.port(),
                            config.connectionLimits().tcpKeepAliveSeconds(), initializer));
            mqttListeners.add(bound);
            started.push(new Stoppable(l.name() + " listener", bound));
            log.info("Listening for MQTT over {} on {}{}{}", l.name(), bound.address(),
                    webSocket ? MqttChannelInitializer.WEBSOCKET_PATH : "",
                    l.proxyProtocol() ? " (PROXY protocol header required)" : "");
        }
    }

    /**
     * The secure listeners' TLS material, checked for changed files every
     * {@code listeners.tls.reload-interval}: renewed certificates, keys, CAs and CRLs are used for new
     * connections without a restart.
     */
    private ServerTls serverTls() {
        ClientCertSettings c = config.clientCerts();
        java.util.List<java.nio.file.Path> files = new java.util.ArrayList<>(List.of(config.tlsCertFile(), config.tlsKeyFile()));
        if (c.caFile() != null) {
            files.add(c.caFile());
        }
        if (c.crlFile() != null) {
            files.add(c.crlFile());
        }
        ServerTls tls = new ServerTls(() -> {
            ClientCertificates clients = clientCertificates();
            return new ServerTls.Material(sslContext(clients), clients);
        }, files, config.tlsSettings().handshakeTimeout());
        java.time.Duration every = config.tlsSettings().reloadInterval();
        if (!every.isZero()) {
            java.util.concurrent.ScheduledExecutorService reloads = java.util.concurrent.Executors
                    .newSingleThreadScheduledExecutor(new io.netty.util.concurrent.DefaultThreadFactory("fleetmq-tls-reload", true));
            reloads.scheduleWithFixedDelay(() -> {
                try {
                    tls.reloadIfChanged();
                } catch (RuntimeException e) {
                    log.warn("Checking the TLS files failed: {}", e.toString());
                }
            }, every.toMillis(), every.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            started.push(new Stoppable("TLS file checks", reloads::shutdownNow));
        }
        return tls;
    }

    private SslContext sslContext(ClientCertificates clients) {
        io.fleetmq.app.config.TlsSettings t = config.tlsSettings();
        try {
            SslContextBuilder builder = SslContextBuilder.forServer(config.tlsCertFile().toFile(),
                    config.tlsKeyFile().toFile(), t.keyPassword())
                    .protocols(t.protocols());
            if (!t.ciphers().isEmpty()) {
                builder.ciphers(t.ciphers());
            }
            return clients.applyTo(builder).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new ConfigException("settings listeners.tls.cert-file (MQTT_TLS_CERT_FILE) and listeners.tls.key-file"
                    + " (MQTT_TLS_KEY_FILE): cannot load the certificate and key: " + HealthStatus.describe(e), e);
        }
    }

    /** What the TLS listeners ask of clients' certificates (listeners.tls.client-auth). */
    private ClientCertificates clientCertificates() {
        ClientCertSettings c = config.clientCerts();
        try {
            return ClientCertificates.load(c.clientAuth(), c.caFile(), c.crlFile());
        } catch (IllegalArgumentException e) {
            // The message names the file at fault.
            throw new ConfigException("settings listeners.tls.ca-file (MQTT_TLS_CA_FILE) and listeners.tls.crl-file"
                    + " (MQTT_TLS_CRL_FILE): " + e.getMessage(), e);
        }
    }

    private static <T> T bind(String setting, java.util.function.Supplier<T> binder) {
        try {
            return binder.get();
        } catch (ListenerBindException e) {
            // Driver messages may quote the connection string, password included.
            throw new StartupException(io.fleetmq.core.log.Secrets.mask(e.getMessage()) + " (" + setting + ")", e);
        }
    }

    private static <T> T dependency(String setting, java.util.function.Supplier<T> connect) {
        try {
            return connect.get();
        } catch (IllegalStateException e) {
            // Driver messages may quote the connection string, password included.
            throw new StartupException(io.fleetmq.core.log.Secrets.mask(e.getMessage()) + " (" + setting + ")", e);
        }
    }

    public BrokerConfig config() {
        return config;
    }

    public Readiness readiness() {
        return readiness;
    }

    public Metrics metrics() {
        return metrics;
    }

    public int httpPort() {
        return http.port();
    }

    /** Port of the named MQTT listener ("TCP", "TLS", "WebSocket", "secure WebSocket"), or -1. */
    public int mqttPort(String listener) {
        return mqttListeners.stream().filter(l -> l.name().equals(listener)).mapToInt(BoundListener::port)
                .findFirst().orElse(-1);
    }

    /**
     * Accepts MQTT connections made in this JVM at {@code address} (Netty's local transport),
     * through the TCP listener's pipeline, limits, authentication and metrics, on event loops of
     * their own: connections that take no file descriptor. For an application that embeds the node,
     * and for measuring a node with more connections than the process may open files
     * (broker-bench's in-process fleet). Stops with the node: its clients are told so as a socket's
     * are (DISCONNECT, Server Shutting Down), and their connections end with the event loops.
     *
     * @throws IllegalStateException the TCP listener is disabled, or the node stopped
     */
    public synchronized BoundListener acceptInProcess(io.netty.channel.local.LocalAddress address) {
        if (closed.get()) {
            throw new IllegalStateException("the node stopped");
        }
        if (tcpInitializer == null) {
            throw new IllegalStateException("in-process connections use the TCP listener's pipeline, and it is "
                    + "disabled (listeners.tcp.enabled)");
        }
        BoundListener bound = Listeners.bindInProcess(loops, "in-process", address, tcpInitializer);
        synchronized (started) {
            if (closed.get()) { // close() began meanwhile: it may have drained the stack already
                bound.close();
                throw new IllegalStateException("the node stopped");
            }
            started.push(new Stoppable("in-process listener", bound));
        }
        log.info("Accepting MQTT connections in this process at {}", address);
        return bound;
    }

    /** Addresses of the dependencies the node uses (embedded or external), for tests and logs. */
    public KafkaSettings kafkaSettings() {
        return kafkaSettings;
    }

    public RedisSettings redisSettings() {
        return redisSettings;
    }

    public DatabaseSettings databaseSettings() {
        return databaseSettings;
    }

    /**
     * Graceful stop, the reverse of start-up: report not ready, stop accepting clients, close the
     * clients of Redis, PostgreSQL and Kafka (producers flush on close), stop the embedded services,
     * and close the admin port last, so load balancers see "stopping" until the end.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        readiness.stopping();
        boolean wasRunning = !started.isEmpty();
        while (true) {
            Stoppable next;
            synchronized (started) {
                next = started.poll();
            }
            if (next == null) {
                break;
            }
            closeQuietly(next);
        }
        readiness.close();
        if (wasRunning) {
            log.info("FleetMQ node {} stopped", config.nodeId());
        }
    }

    private static void closeQuietly(Stoppable s) {
        try {
            s.resource().close();
        } catch (Exception e) {
            log.warn("Stopping {} failed: {}", s.name(), HealthStatus.describe(e));
        }
    }
}
