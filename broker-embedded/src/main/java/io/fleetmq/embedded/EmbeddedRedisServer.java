package io.fleetmq.embedded;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.Redis;
import redis.embedded.core.ExecutableProvider;
import redis.embedded.model.OsArchitecture;

/**
 * A Redis server child process with its state (append-only file and RDB snapshot) in {@code <dataDir>/redis}.
 *
 * <p>The binary is {@code redis-server} from the {@code PATH} when there is one (kept up to date by the system's
 * package manager), otherwise the one bundled in {@code com.github.codemonstur:embedded-redis}. The process itself
 * is managed here rather than by that library's {@code RedisServer}: the library stops reading the server's output
 * once it is ready, has no start timeout and registers a new JVM shutdown hook on every start.
 */
public final class EmbeddedRedisServer {

    static final String SERVICE = "Redis";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedRedisServer.class);
    /** Server output goes to its own logger so applications can quieten it without losing lifecycle messages. */
    private static final Logger serverLog = LoggerFactory.getLogger(EmbeddedRedisServer.class.getName() + ".output");
    /** Redis log lines look like {@code 1234:M 29 Nov 2026 10:00:00.000 * message}; the mark is the level. */
    private static final Pattern LOG_LINE = Pattern.compile("^\\d+:[A-Z] .*? ([.\\-*#]) (.*)$");
    private static final Pattern ERROR_WORDS = Pattern.compile("(?i).*\\b(error|fail\\w*|can't|cannot|unable)\\b.*");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final int RECENT_LINES = 20;

    private static File binary;

    private final Path workDir;
    private final String host;
    private int port;
    /** Volatile so the process-exit callback can tell an expected stop from a crash without taking the lock. */
    private volatile Process process;
    private Thread outputReader;
    private ShutdownSafetyNet safetyNet;
    private FileLock dataDirLock;
    private File executable;

    public EmbeddedRedisServer(Path dataDir, String host, int port) {
        this.workDir = dataDir.toAbsolutePath().resolve("redis");
        this.host = host;
        this.port = port;
    }

    /** Starts the server and waits until it accepts connections; loads earlier data from the work dir. */
    public synchronized void start() {
        if (process != null) {
            return;
        }
        long begin = System.nanoTime();
        DataDirOwnership.claim(SERVICE, workDir);
        try {
            try {
                Files.createDirectories(workDir);
            } catch (IOException e) {
                throw EmbeddedServiceException.wrap(SERVICE, "creating " + workDir, e);
            }
            dataDirLock = DataDirOwnership.lock(SERVICE, workDir.resolve("fleetmq.lock"));
            // Before the port check: a server left over by a dead JVM may be the one holding the port.
            DataDirOwnership.stopLeftOver(SERVICE, pidFile(), EmbeddedRedisServer::isRedisServer);
            launch();
        } catch (RuntimeException e) {
            releaseDataDir();
            throw e;
        }
        log.info("embedded Redis ready at {} (pid {}, {}, data in {}) in {} ms",
                url(), process.pid(), executable, workDir, (System.nanoTime() - begin) / 1_000_000);
    }

    private void launch() {
        port = Ports.resolveFree(SERVICE, host, port)[0];

        Path config = workDir.resolve("redis.conf");
        try {
            Files.writeString(config, configuration(), StandardCharsets.UTF_8);
            executable = redisServerBinary();
        } catch (IOException | RuntimeException e) {
            throw EmbeddedServiceException.wrap(SERVICE, "preparing " + workDir, e);
        }

        Process started;
        try {
            started = new ProcessBuilder(inOwnSession(executable.getAbsolutePath(), config.toString()))
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw EmbeddedServiceException.wrap(SERVICE, "launching " + executable, e);
        }
        Deque<String> recentOutput = new ArrayDeque<>();
        CompletableFuture<Void> ready = new CompletableFuture<>();
        Thread reader = new Thread(() -> readOutput(started, ready, recentOutput), "redis-server-" + port + "-output");
        reader.setDaemon(true);
        reader.start();
        started.onExit().thenRun(() -> {
            ready.completeExceptionally(new IllegalStateException("redis-server exited with code " + started.exitValue()));
            if (process == started) {
                log.error("embedded Redis (pid {}) exited unexpectedly with code {}", started.pid(), started.exitValue());
            }
        });
        try {
            ready.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            terminate(started, reader);
            throw EmbeddedServiceException.of(SERVICE, "interrupted while starting", e);
        } catch (ExecutionException | TimeoutException e) {
            terminate(started, reader);
            throw startFailure(e instanceof ExecutionException ? e.getCause() : e, recentOutput);
        }
        process = started;
        outputReader = reader;
        safetyNet = new ShutdownSafetyNet("embedded Redis on port " + port, this::stop);
    }

    /** Asks the server to save and exit (SHUTDOWN SAVE), waiting until the process is gone. */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        long begin = System.nanoTime();
        Process stopping = process;
        Thread reader = outputReader;
        process = null;
        outputReader = null;
        safetyNet.disarm();
        safetyNet = null;
        if (!requestShutdown()) {
            // SIGTERM also makes Redis save before exiting (its default shutdown-on-sigterm behaviour).
            stopping.destroy();
        }
        try {
            if (!stopping.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("embedded Redis pid {} did not exit within {}; killing it", stopping.pid(), STOP_TIMEOUT);
                stopping.destroyForcibly().waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
            reader.join(STOP_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopping.destroyForcibly();
        }
        releaseDataDir();
        log.info("embedded Redis at {} stopped in {} ms", Ports.hostPort(Ports.connectHost(host), port),
                (System.nanoTime() - begin) / 1_000_000);
    }

    public synchronized boolean isRunning() {
        return process != null;
    }

    /** {@code redis://host:port}, or {@code null} while not running. */
    public synchronized String url() {
        return process == null ? null : "redis://" + Ports.hostPort(Ports.connectHost(host), port);
    }

    /** The port; the requested one until the first start resolves a requested 0. */
    public synchronized int port() {
        return port;
    }

    public Path workDir() {
        return workDir;
    }

    private String configuration() throws IOException {
        String bindAddress = InetAddress.getByName(host).getHostAddress();
        return String.join("\n", List.of(
                "# Written by FleetMQ on every start of the embedded Redis; edits are overwritten.",
                "bind " + bindAddress,
                "port " + port,
                // Protected mode only matters for non-loopback binds without a password; there it stays on so an
                // open Redis is never exposed by accident.
                "protected-mode " + (Ports.isLoopback(host) ? "no" : "yes"),
                "daemonize no",
                // Lets a later start find a server that a killed JVM left running on this directory.
                "pidfile " + quote(pidFile().toString()),
                "dir " + quote(workDir.toString()),
                "logfile \"\"",
                "loglevel notice",
                "always-show-logo no",
                // Both an append-only file (at most a second of writes lost on a crash) and periodic snapshots.
                "appendonly yes",
                "appendfsync everysec",
                "dbfilename dump.rdb",
                "save 900 1",
                "save 300 10",
                "save 60 10000",
                ""));
    }

    /**
     * Runs the command in a session of its own where {@code setsid} exists, so a Ctrl-C or a signal
     * sent to the broker's process group reaches only the broker, which then stops Redis in order
     * (after its clients) instead of Redis stopping underneath it. setsid execs in place here (the
     * JVM's child is not a group leader), so the process id stays Redis's own.
     */
    private static List<String> inOwnSession(String... command) {
        List<String> full = new ArrayList<>();
        for (String dir : List.of("/usr/bin/setsid", "/bin/setsid")) {
            if (Files.isExecutable(Path.of(dir))) {
                full.add(dir);
                break;
            }
        }
        full.addAll(List.of(command));
        return full;
    }

    private Path pidFile() {
        return workDir.resolve("redis.pid");
    }

    /** Redis renames its process title to "redis-server host:port"; Valkey's compatible server is also accepted. */
    private static boolean isRedisServer(ProcessHandle process) {
        String description = process.info().command().orElse("") + " " + process.info().commandLine().orElse("");
        return description.contains("redis-server") || description.contains("valkey-server");
    }

    private static String quote(String value) {
        return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    /**
     * The {@code redis-server} binary the embedded Redis runs (from the PATH, else the bundled one),
     * for tests that start Redis in other shapes: Sentinel, Cluster.
     */
    public static File executable() {
        try {
            return redisServerBinary();
        } catch (IOException e) {
            throw EmbeddedServiceException.wrap(SERVICE, "finding redis-server", e);
        }
    }

    private static synchronized File redisServerBinary() throws IOException {
        if (binary != null && binary.canExecute()) {
            return binary;
        }
        try {
            binary = ExecutableProvider.newExecutableInPath("redis-server").get();
        } catch (FileNotFoundException notOnPath) {
            binary = bundledBinary();
        }
        return binary;
    }

    /**
     * Extracts the binary bundled for this platform into a directory named after its digest and reuses it from
     * then on, also in later JVMs: the library's own provider copies the ~10 MB file into a new temporary
     * directory per start, which a killed JVM never removes.
     */
    private static File bundledBinary() throws IOException {
        String resource = ExecutableProvider.newProvidedVersionsMap().get(OsArchitecture.detectOSandArchitecture());
        if (resource == null) {
            throw new FileNotFoundException("no bundled redis-server for " + OsArchitecture.detectOSandArchitecture()
                    + " and none on the PATH");
        }
        byte[] content;
        try (InputStream in = ExecutableProvider.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new FileNotFoundException("bundled redis-server " + resource + " is missing");
            }
            content = in.readAllBytes();
        }
        String digest;
        try {
            digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content)).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
        String fileName = resource.substring(resource.lastIndexOf('/') + 1);
        // Per user: another user's directory of the same name could not be written to.
        Path dir = Path.of(System.getProperty("java.io.tmpdir"),
                "fleetmq-redis-" + System.getProperty("user.name"), digest);
        Path target = dir.resolve(fileName);
        if (Files.isExecutable(target) && Files.size(target) == content.length) {
            return target.toFile();
        }
        Files.createDirectories(dir);
        // Written aside and moved into place, so a concurrent JVM never runs a half-written file.
        Path partial = Files.createTempFile(dir, fileName, ".partial");
        try {
            Files.write(partial, content);
            if (!partial.toFile().setExecutable(true)) {
                throw new IOException("cannot make " + partial + " executable");
            }
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(partial);
        }
        return target.toFile();
    }

    private void readOutput(Process started, CompletableFuture<Void> ready, Deque<String> recentOutput) {
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(started.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                logServerLine(line);
                if (!ready.isDone()) {
                    synchronized (recentOutput) {
                        recentOutput.addLast(line);
                        if (recentOutput.size() > RECENT_LINES) {
                            recentOutput.removeFirst();
                        }
                    }
                    if (Redis.SERVER_READY_PATTERN.matcher(line).matches()) {
                        ready.complete(null);
                    }
                }
            }
        } catch (IOException e) {
            // the pipe closes with the process; whatever is left is of no use once it is gone
            log.debug("stopped reading redis-server output: {}", e.toString());
        }
    }

    /**
     * Redis logs routine events (start, shutdown) at its warning level, so only warning lines that look like
     * failures are logged as warnings; the rest stays at debug.
     */
    private static void logServerLine(String line) {
        Matcher matcher = LOG_LINE.matcher(line);
        if (!matcher.matches()) {
            serverLog.debug("{}", line);
            return;
        }
        String message = matcher.group(2);
        if ("#".equals(matcher.group(1)) && ERROR_WORDS.matcher(message).matches()
                && !message.startsWith("WARNING")) {
            serverLog.warn("{}", message);
        } else if ("#".equals(matcher.group(1))) {
            serverLog.info("{}", message);
        } else {
            serverLog.debug("{}", message);
        }
    }

    private EmbeddedServiceException startFailure(Throwable cause, Deque<String> recentOutput) {
        String output;
        synchronized (recentOutput) {
            output = String.join(" | ", recentOutput);
        }
        if (output.toLowerCase(Locale.ROOT).contains("address already in use")) {
            return Ports.portInUse(SERVICE, host, port, cause);
        }
        String reason = cause instanceof TimeoutException
                ? "redis-server did not become ready within " + START_TIMEOUT.toSeconds() + " s"
                : cause.getMessage();
        return EmbeddedServiceException.of(SERVICE, reason + (output.isEmpty() ? "" : ": " + lastLines(output)), cause);
    }

    private static String lastLines(String output) {
        return output.length() <= 500 ? output : "..." + output.substring(output.length() - 500);
    }

    /** Sends {@code SHUTDOWN SAVE}; on success Redis replies nothing and closes the connection as it exits. */
    private boolean requestShutdown() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(Ports.connectHost(host), port), 5_000);
            socket.setSoTimeout((int) STOP_TIMEOUT.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write("*2\r\n$8\r\nSHUTDOWN\r\n$4\r\nSAVE\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            byte[] reply = socket.getInputStream().readAllBytes();
            if (reply.length > 0) {
                log.warn("embedded Redis refused SHUTDOWN SAVE: {}", new String(reply, StandardCharsets.UTF_8).strip());
                return false;
            }
            return true;
        } catch (IOException e) {
            log.warn("embedded Redis did not take SHUTDOWN SAVE ({}); terminating the process", e.toString());
            return false;
        }
    }

    private void releaseDataDir() {
        if (dataDirLock != null) {
            DataDirOwnership.unlock(dataDirLock);
            dataDirLock = null;
        }
        DataDirOwnership.release(workDir);
    }

    private static void terminate(Process started, Thread reader) {
        started.destroyForcibly();
        try {
            started.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            reader.join(STOP_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
