package io.fleetmq.embedded;

import java.io.BufferedReader;
import java.io.File;
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
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
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

/**
 * A Redis server child process with its state (append-only file and RDB snapshot) in {@code <dataDir>/redis}.
 *
 * <p>The binary is chosen by a {@link RedisBinary}: by default {@code redis-server} from the {@code PATH} when
 * there is one, otherwise the one bundled in {@code com.github.codemonstur:embedded-redis}. The process itself is
 * managed here rather than by that library's {@code RedisServer}: the library stops reading the server's output
 * once it is ready, has no start timeout and registers a new JVM shutdown hook on every start.
 *
 * <p>Whatever the binary, the server stops on SIGTERM: it has no snapshot save points (the append-only file is
 * its persistence), so its shutdown never depends on a save that can fail, for example because its directory has
 * been deleted underneath it; servers from Redis 7 on are also told to exit on SIGTERM despite errors. {@link
 * #stop()} asks for a snapshot first, then sends SIGTERM, then SIGKILL, each after a bounded wait, and returns once
 * the process and anything it started are gone. If the JVM exits without stopping it, a shutdown hook does (after
 * a grace period for the application's own shutdown); if the JVM is killed, an {@link OrphanGuard} does.
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
    /** How long SHUTDOWN SAVE may take: a snapshot of a large data set takes a while. */
    private static final Duration SAVE_TIMEOUT = Duration.ofSeconds(30);
    /** How long each signal is given before the next, stronger one. */
    private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(10);
    private static final int RECENT_LINES = 20;

    private final RedisBinary binary;
    private final Path workDir;
    private final String host;
    private int port;
    /** Volatile so the process-exit callback can tell an expected stop from a crash without taking the lock. */
    private volatile Process process;
    private Thread outputReader;
    private ShutdownSafetyNet safetyNet;
    private OrphanGuard orphanGuard;
    private FileLock dataDirLock;
    private File executable;

    public EmbeddedRedisServer(Path dataDir, String host, int port) {
        this(dataDir, host, port, RedisBinary.AUTO);
    }

    public EmbeddedRedisServer(Path dataDir, String host, int port, RedisBinary binary) {
        this.binary = binary;
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
        log.info("embedded Redis ready at {} (pid {}, {} binary {}, data in {}) in {} ms",
                url(), process.pid(), binary, executable, workDir, (System.nanoTime() - begin) / 1_000_000);
    }

    private void launch() {
        port = Ports.resolveFree(SERVICE, host, port)[0];

        Path config = workDir.resolve("redis.conf");
        try {
            executable = binary.executable();
            Files.writeString(config, configuration(binary.majorVersion()), StandardCharsets.UTF_8);
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
        orphanGuard = OrphanGuard.watch("embedded Redis on port " + port, started.toHandle(), sessionPrefix());
    }

    /**
     * Asks the server to save a snapshot and exit (SHUTDOWN SAVE); if it refuses or does not exit, sends SIGTERM,
     * and then SIGKILL, each after a bounded wait. Returns once the process and any child of it are gone.
     *
     * @throws EmbeddedServiceException if the process still runs even after SIGKILL
     */
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
        if (orphanGuard != null) {
            orphanGuard.disarm();
            orphanGuard = null;
        }
        String name = "embedded Redis on port " + port;
        boolean gone = requestShutdown() && Processes.awaitGone(stopping.toHandle(), SIGNAL_TIMEOUT);
        if (!gone) {
            // Without save points SIGTERM needs no save, so it ends the server even where SHUTDOWN SAVE failed.
            gone = Processes.end(name, stopping.toHandle(), true, SIGNAL_TIMEOUT, SIGNAL_TIMEOUT);
        }
        try {
            reader.join(SIGNAL_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        releaseDataDir();
        if (!gone) {
            throw EmbeddedServiceException.of(SERVICE, "pid " + stopping.pid() + " did not exit even after SIGKILL");
        }
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

    /** The process id of the server, or {@code -1} while not running. */
    public synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    /** The binary choice this server runs with. */
    public RedisBinary binary() {
        return binary;
    }

    /** The port; the requested one until the first start resolves a requested 0. */
    public synchronized int port() {
        return port;
    }

    public Path workDir() {
        return workDir;
    }

    private String configuration(int majorVersion) throws IOException {
        String bindAddress = InetAddress.getByName(host).getHostAddress();
        List<String> lines = new ArrayList<>(List.of(
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
                // The append-only file is the persistence: at most a second of writes lost on a crash.
                "appendonly yes",
                "appendfsync everysec",
                // DEVICE queues write far more to the file than they keep. From Redis' default of 64 MB on, a
                // node under load rewrote it every ten seconds, and queue writes slowed to a crawl for a second
                // or two around a rewrite; from 256 MB on, rewrites are four times rarer, and the file stays
                // below about twice that on disk.
                "auto-aof-rewrite-min-size 256mb",
                // No snapshot save points: with them a server saves on SIGTERM and, if that save fails (a full disk,
                // a directory deleted underneath it), refuses to exit. stop() asks for a snapshot explicitly.
                "save \"\"",
                "dbfilename dump.rdb"));
        if (majorVersion >= 7) {
            // Redis 7 can be told that SIGTERM means exit, even if flushing the append-only file fails.
            lines.add("shutdown-on-sigterm nosave force");
        }
        lines.add("");
        return String.join("\n", lines);
    }

    /**
     * Runs the command in a session of its own where {@code setsid} exists, so a Ctrl-C or a signal
     * sent to the broker's process group reaches only the broker, which then stops Redis in order
     * (after its clients) instead of Redis stopping underneath it. setsid execs in place here (the
     * JVM's child is not a group leader), so the process id stays Redis's own.
     */
    private static List<String> inOwnSession(String... command) {
        List<String> full = new ArrayList<>(sessionPrefix());
        full.addAll(List.of(command));
        return full;
    }

    private static List<String> sessionPrefix() {
        for (String setsid : List.of("/usr/bin/setsid", "/bin/setsid")) {
            if (Files.isExecutable(Path.of(setsid))) {
                return List.of(setsid);
            }
        }
        return List.of();
    }

    private Path pidFile() {
        return workDir.resolve("redis.pid");
    }

    /**
     * Redis renames its process title to "redis-server host:port"; Valkey's compatible server is also accepted.
     * Debian's {@code redis-server} is a link to {@code redis-check-rdb}, which is the executable the process shows.
     */
    private static boolean isRedisServer(ProcessHandle process) {
        String description = process.info().command().orElse("") + " " + Processes.commandLine(process);
        return description.contains("redis-server") || description.contains("valkey-server")
                || description.contains("redis-check-rdb");
    }

    private static String quote(String value) {
        return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    /**
     * The {@code redis-server} binary the embedded Redis runs by default (from the PATH, else the bundled one),
     * for tests that start Redis in other shapes: Sentinel, Cluster.
     */
    public static File executable() {
        return RedisBinary.AUTO.executable();
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
            socket.setSoTimeout((int) SAVE_TIMEOUT.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write("*2\r\n$8\r\nSHUTDOWN\r\n$4\r\nSAVE\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // A refusal is one error line on a connection that stays open; reading to the end would wait forever.
            InputStream in = socket.getInputStream();
            StringBuilder reply = new StringBuilder();
            int b;
            while ((b = in.read()) != -1 && b != '\n' && reply.length() < 1_000) {
                reply.append((char) b);
            }
            if (!reply.isEmpty()) {
                log.warn("embedded Redis refused SHUTDOWN SAVE ({}); sending SIGTERM", reply.toString().strip());
                return false;
            }
            return true;
        } catch (IOException e) {
            log.warn("embedded Redis did not take SHUTDOWN SAVE ({}); sending SIGTERM", e.toString());
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
        Processes.end("redis-server pid " + started.pid(), started.toHandle(), false, SIGNAL_TIMEOUT, SIGNAL_TIMEOUT);
        try {
            reader.join(SIGNAL_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
