package io.fleetmq.bench.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Debian's Mosquitto, started by a test on a free loopback port with its own throw-away config, and
 * stopped (by its own PID) when the test ends. Tests check {@link #isInstalled()} first and skip
 * when it is not: CI machines may have only a JDK. {@code -Dfleetmq.bench.mosquitto=PATH} points
 * at another binary, or at none to try the skip path.
 */
public final class MosquittoProcess implements AutoCloseable {

    public static final Path BINARY = Path.of(System.getProperty("fleetmq.bench.mosquitto", "/usr/sbin/mosquitto"));
    public static final Path PASSWD_BINARY = Path.of(System.getProperty("fleetmq.bench.mosquitto-passwd",
            "/usr/bin/mosquitto_passwd"));
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    private final Process process;
    private final Path log;
    private final int port;

    private MosquittoProcess(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    public static boolean isInstalled() {
        return Files.isExecutable(BINARY);
    }

    /** Starts Mosquitto with {@code listener PORT 127.0.0.1} and anonymous access; returns once it accepts. */
    public static MosquittoProcess start(Path dir) throws IOException, InterruptedException {
        return start(dir, "allow_anonymous true");
    }

    /** Starts Mosquitto that lets anyone in and logs every subscription ({@code <client> <qos> <filter>}). */
    public static MosquittoProcess startLoggingSubscriptions(Path dir) throws IOException, InterruptedException {
        return start(dir, "allow_anonymous true\nlog_type all");
    }

    /**
     * Starts Mosquitto that lets in only {@code username} with {@code password}, from a password file
     * written by {@code mosquitto_passwd} next to the binary.
     */
    public static MosquittoProcess startWithPassword(Path dir, String username, String password)
            throws IOException, InterruptedException {
        Path file = dir.resolve("mosquitto.passwd");
        Process passwd = new ProcessBuilder(PASSWD_BINARY.toString(), "-c", "-b", file.toString(), username, password).redirectErrorStream(true).start();
        String output = new String(passwd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!passwd.waitFor(30, TimeUnit.SECONDS) || passwd.exitValue() != 0) {
            throw new IllegalStateException("mosquitto_passwd failed: " + output);
        }
        // Mosquitto started as root would read the file as its own user, from a directory only root may enter;
        // "user root" keeps it root (and is ignored when not started as root).
        return start(dir, "allow_anonymous false\npassword_file " + file + "\nuser root");
    }

    private static MosquittoProcess start(Path dir, String access) throws IOException, InterruptedException {
        int port = FreePort.next();
        Path config = dir.resolve("mosquitto.conf");
        Files.writeString(config, String.join("\n",
                "listener " + port + " 127.0.0.1",
                access,
                "persistence false",
                ""), StandardCharsets.UTF_8);
        Path log = dir.resolve("mosquitto.log");
        Process process = new ProcessBuilder(BINARY.toString(), "-c", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        MosquittoProcess mosquitto = new MosquittoProcess(process, log, port);
        try {
            mosquitto.awaitListening();
        } catch (IOException | RuntimeException | InterruptedException e) {
            mosquitto.close();
            throw e;
        }
        return mosquitto;
    }

    public int port() {
        return port;
    }

    /** For {@code --broker-pid} and {@code --kill-pid}: the broker process itself, not a wrapper. */
    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public String log() throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8);
    }

    private void awaitListening() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("mosquitto exited with " + process.exitValue() + ":\n" + log());
            }
            try {
                new Socket(InetAddress.getLoopbackAddress(), port).close();
                return;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("mosquitto not listening on " + port + " after " + START_TIMEOUT + ":\n"
                + log());
    }

    /** SIGTERM to our own process, SIGKILL if it is still there after 5 s. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
