package io.fleetmq.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An in-process Kafka node in KRaft mode acting as both broker and controller (node id 1).
 *
 * <p>Logs live in {@code <dataDir>/kafka}; the cluster id is kept in {@code <dataDir>/kafka-cluster-id} so a
 * restart on the same data dir finds the same cluster and all its records. Ports chosen on the first start (for a
 * requested port of 0) are kept for later restarts of this object so clients can reconnect to the same address.
 */
public final class EmbeddedKafkaServer {

    static final String SERVICE = "Kafka";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedKafkaServer.class);
    private static final int NODE_ID = 1;
    private static final String META_PROPERTIES = "meta.properties";

    private final Path dataDir;
    private final Path logDir;
    private final Path clusterIdFile;
    private final String host;
    private int port;
    private int controllerPort;
    private String clusterId;
    private KafkaRaftServer server;
    /** Extra plaintext listeners: name to {bind port, advertised host:port}. */
    private final java.util.Map<String, String[]> extraListeners = new java.util.LinkedHashMap<>();

    public EmbeddedKafkaServer(Path dataDir, String host, int port, int controllerPort) {
        this.dataDir = dataDir.toAbsolutePath();
        this.logDir = this.dataDir.resolve("kafka");
        this.clusterIdFile = this.dataDir.resolve("kafka-cluster-id");
        this.host = host;
        this.port = port;
        this.controllerPort = controllerPort;
    }

    /**
     * Adds a plaintext listener bound to {@code port} that tells clients to reach the broker at
     * {@code advertised} (say, a TCP proxy in front of {@code port}): clients bootstrapping through
     * it keep every later connection on that path. Call before {@link #start()}.
     */
    public synchronized EmbeddedKafkaServer withListener(String name, int port, String advertised) {
        if (!name.matches("[A-Z][A-Z0-9_]*") || name.equals("PLAINTEXT") || name.equals("CONTROLLER")) {
            throw new IllegalArgumentException("listener name must be upper case and new: " + name);
        }
        extraListeners.put(name, new String[] {Integer.toString(port), advertised});
        return this;
    }

    /** Formats the log dir if it has never been formatted, then starts and waits until the broker is serving. */
    public synchronized void start() {
        if (server != null) {
            return;
        }
        long begin = System.nanoTime();
        int[] ports = Ports.resolveFree(SERVICE, host, port, controllerPort);
        port = ports[0];
        controllerPort = ports[1];

        Properties properties = serverProperties();
        DataDirOwnership.claim(SERVICE, logDir);
        KafkaExitGuard.enter();
        try {
            server = startServer(properties);
        } catch (RuntimeException e) {
            DataDirOwnership.release(logDir);
            throw e;
        } finally {
            KafkaExitGuard.leave();
        }
        log.info("embedded Kafka {} ready at {} (controller port {}, cluster {}, log dir {}) in {} ms",
                NODE_ID, bootstrapServers(), controllerPort, clusterId, logDir, millisSince(begin));
    }

    private KafkaRaftServer startServer(Properties properties) {
        try {
            Files.createDirectories(logDir);
            clusterId = loadOrCreateClusterId();
            if (!Files.exists(logDir.resolve(META_PROPERTIES))) {
                format(properties);
            }
        } catch (IOException | RuntimeException e) {
            throw EmbeddedServiceException.wrap(SERVICE, "formatting " + logDir, e);
        }
        KafkaRaftServer candidate;
        try {
            // Reads and checks meta.properties, so a log dir of another node or cluster fails here.
            candidate = new KafkaRaftServer(new KafkaConfig(properties, false), Time.SYSTEM);
        } catch (RuntimeException e) {
            throw EmbeddedServiceException.wrap(SERVICE, "start", e);
        }
        try {
            // Returns once the broker is registered, caught up with the metadata log and unfenced.
            candidate.startup();
        } catch (RuntimeException e) {
            shutDown(candidate);
            throw startFailure(e);
        }
        return candidate;
    }

    /** Shuts the node down and waits for all of its threads; a later {@link #start()} reuses the same data. */
    public synchronized void stop() {
        if (server == null) {
            return;
        }
        long begin = System.nanoTime();
        KafkaRaftServer stopping = server;
        server = null;
        KafkaExitGuard.enter();
        try {
            shutDown(stopping);
        } finally {
            KafkaExitGuard.leave();
            DataDirOwnership.release(logDir);
        }
        log.info("embedded Kafka at {} stopped in {} ms", Ports.hostPort(Ports.connectHost(host), port), millisSince(begin));
    }

    public synchronized boolean isRunning() {
        return server != null;
    }

    /** {@code host:port} for Kafka clients, or {@code null} while not running. */
    public synchronized String bootstrapServers() {
        return server == null ? null : Ports.hostPort(Ports.connectHost(host), port);
    }

    /** The client port; the requested one until the first start resolves a requested 0. */
    public synchronized int port() {
        return port;
    }

    public synchronized int controllerPort() {
        return controllerPort;
    }

    /** The KRaft cluster id, known after the first start. */
    public synchronized String clusterId() {
        return clusterId;
    }

    public Path logDir() {
        return logDir;
    }

    private Properties serverProperties() {
        String advertisedHost = Ports.connectHost(host);
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", Integer.toString(NODE_ID));
        // A static voter set keeps the controller address out of the formatted storage, so a restart may use a
        // different controller port (a requested port of 0 picks a new one for a new server object).
        p.put("controller.quorum.voters", NODE_ID + "@" + Ports.hostPort(advertisedHost, controllerPort));
        p.put("controller.listener.names", "CONTROLLER");
        StringBuilder listeners = new StringBuilder("PLAINTEXT://" + Ports.hostPort(host, port) + ",CONTROLLER://"
                + Ports.hostPort(host, controllerPort));
        StringBuilder advertised = new StringBuilder("PLAINTEXT://" + Ports.hostPort(advertisedHost, port));
        StringBuilder protocols = new StringBuilder("PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        extraListeners.forEach((name, portAndAddress) -> {
            listeners.append(',').append(name).append("://").append(Ports.hostPort(host, Integer.parseInt(portAndAddress[0])));
            advertised.append(',').append(name).append("://").append(portAndAddress[1]);
            protocols.append(',').append(name).append(":PLAINTEXT");
        });
        p.put("listeners", listeners.toString());
        p.put("advertised.listeners", advertised.toString());
        p.put("listener.security.protocol.map", protocols.toString());
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("log.dirs", logDir.toString());

        // Single node: internal topics cannot have more replicas than brokers.
        p.put("offsets.topic.replication.factor", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("min.insync.replicas", "1");
        // The defaults (50 partitions each) are sized for large clusters and make the first consumer group or
        // transaction on a fresh node noticeably slower; one node gains nothing from them.
        p.put("offsets.topic.num.partitions", "5");
        p.put("transaction.state.log.num.partitions", "5");
        p.put("share.coordinator.state.topic.num.partitions", "5");

        // Lets a broker node's consumer groups notice a dead node within its cluster.node-timeout, also
        // below Kafka's usual floor of 6 s (local clusters and tests use a few seconds).
        p.put("group.min.session.timeout.ms", "1000");
        // Nothing to wait for with a single member; the default delays every first join by 3 s.
        p.put("group.initial.rebalance.delay.ms", "0");
        // The log cleaner allocates this up front (128 MiB by default) on the heap of the embedding JVM.
        p.put("log.cleaner.dedupe.buffer.size", Integer.toString(8 * 1024 * 1024));
        // Fewer threads than the server defaults: this node shares its JVM and CPUs with the broker.
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "4");
        p.put("num.recovery.threads.per.data.dir", "1");
        p.put("background.threads", "4");
        // The broker is unfenced on a heartbeat; a shorter interval shortens startup.
        p.put("broker.heartbeat.interval.ms", "500");
        // After a crash the controller accepts the restarted broker only once the registration of its previous
        // incarnation has timed out (9 s by default). Broker and controller share this JVM, so a pause long
        // enough to miss heartbeats for this long would stall both anyway.
        p.put("broker.session.timeout.ms", "2000");
        return p;
    }

    private String loadOrCreateClusterId() throws IOException {
        if (Files.exists(clusterIdFile)) {
            String stored = Files.readString(clusterIdFile, StandardCharsets.UTF_8).strip();
            if (!stored.isEmpty()) {
                return stored;
            }
        }
        String id = clusterIdFromMetaProperties();
        if (id == null) {
            id = Uuid.randomUuid().toString();
        }
        Files.writeString(clusterIdFile, id + System.lineSeparator(), StandardCharsets.UTF_8);
        return id;
    }

    /** A log dir formatted before the id file existed (or whose id file was lost) still knows its cluster. */
    private String clusterIdFromMetaProperties() throws IOException {
        Path meta = logDir.resolve(META_PROPERTIES);
        if (!Files.exists(meta)) {
            return null;
        }
        Properties properties = new Properties();
        try (var in = Files.newInputStream(meta)) {
            properties.load(in);
        }
        return properties.getProperty("cluster.id");
    }

    private void format(Properties properties) throws IOException {
        Path config = Files.createTempFile(dataDir, "kafka-format-", ".properties");
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        try {
            try (OutputStream out = Files.newOutputStream(config)) {
                properties.store(out, "generated by FleetMQ to format the embedded Kafka log dir");
            }
            int exitCode;
            try (PrintStream print = new PrintStream(output, true, StandardCharsets.UTF_8)) {
                exitCode = StorageTool.execute(
                        new String[] {"format", "--cluster-id", clusterId, "--config", config.toString()}, print);
            }
            String text = output.toString(StandardCharsets.UTF_8).strip();
            if (exitCode != 0) {
                throw EmbeddedServiceException.of(SERVICE, "formatting " + logDir + " failed (exit code " + exitCode + "): " + text);
            }
            log.debug("formatted {} for cluster {}: {}", logDir, clusterId, text);
        } finally {
            try {
                Files.deleteIfExists(config);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * Kafka reports a port taken between our check and its bind in different ways (a BindException for the
     * broker listener, only a log line and an exit request for the controller), so both ports are probed again
     * once the half-started server is shut down.
     */
    private EmbeddedServiceException startFailure(RuntimeException e) {
        for (int candidatePort : new int[] {port, controllerPort}) {
            try {
                Ports.requireFree(SERVICE, host, candidatePort);
            } catch (EmbeddedServiceException taken) {
                return Ports.portInUse(SERVICE, host, candidatePort, e);
            }
        }
        return EmbeddedServiceException.wrap(SERVICE, "start", e);
    }

    private static void shutDown(KafkaRaftServer server) {
        try {
            server.shutdown();
        } catch (RuntimeException e) {
            log.warn("embedded Kafka did not shut down cleanly", e);
        } finally {
            server.awaitShutdown();
        }
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }
}
