package io.fleetmq.app.support;

import io.fleetmq.testkit.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real broker jar in a child JVM, as an operator runs it. Output goes to files so a test can
 * read every line the process printed; {@link #close} ends it with SIGTERM, like a service manager.
 */
public final class BrokerProcess implements AutoCloseable {

    private final Process process;
    private final Path stdout;
    private final Path stderr;

    private BrokerProcess(Process process, Path stdout, Path stderr) {
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /** The jar failsafe passes in, built by the package phase. */
    public static Path jar() {
        String jar = System.getProperty("fleetmq.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("system property fleetmq.jar must point at the built jar (run mvn verify): " + jar);
        }
        return Path.of(jar);
    }

    public static BrokerProcess start(Path workDir, Map<String, String> env, String... args) throws IOException {
        Files.createDirectories(workDir);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx512m");
        // A node of a test lives a minute or two at a few thousand messages a second: the C1
        // compiler alone serves that, and the build does not spend its two cores on C2 compiling
        // every node's hot paths again.
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.add("-jar");
        command.add(jar().toString());
        command.addAll(List.of(args));
        Path logs = logDir(workDir);
        String name = env.getOrDefault("BROKER_NODE_ID", "node") + "-";
        Path out = Files.createTempFile(logs, name, ".out.log");
        Path err = Files.createTempFile(logs, name, ".err.log");
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(workDir.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
        // Only what the test gives: no inherited broker settings from the developer's shell.
        builder.environment().keySet().removeIf(k -> k.startsWith("KAFKA_") || k.startsWith("REDIS_")
                || k.startsWith("DATABASE_") || k.startsWith("MQTT_") || k.startsWith("BROKER_")
                || k.startsWith("EMBEDDED_") || k.equals("HTTP_PORT") || k.equals("BIND_ADDRESS"));
        builder.environment().putAll(env);
        return new BrokerProcess(builder.start(), out, err);
    }

    /**
     * Where a node's output goes: the build's {@code node-logs} directory when failsafe names it
     * (so a failed run's logs outlive the test's temporary directory), else {@code workDir}.
     */
    private static Path logDir(Path workDir) throws IOException {
        String dir = System.getProperty("fleetmq.node-logs");
        if (dir == null) {
            return workDir;
        }
        return Files.createDirectories(Path.of(dir));
    }

    public String stdout() {
        return read(stdout);
    }

    public String stderr() {
        return read(stderr);
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Waits for {@code text} on standard output; fails at once if the process exits first. */
    public void awaitOutput(String text, Duration timeout) {
        try {
            Await.until(timeout, "process output to contain '" + text + "'", () -> {
                if (stdout().contains(text)) {
                    return true;
                }
                if (!process.isAlive()) {
                    throw new AssertionError("process exited with " + process.exitValue()
                            + " before printing '" + text + "'");
                }
                return false;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; output:\n" + tail(), e);
        }
    }

    /** Waits for the process to end by itself and returns its exit code. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("process did not exit within " + timeout + "; stdout:\n" + tail());
        }
        return process.exitValue();
    }

    /** SIGKILL: the process dies at once, as in a crash or a lost machine. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM, then wait for the graceful stop; returns the exit code. */
    public int terminate(Duration timeout) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("process did not stop within " + timeout + " of SIGTERM; stdout:\n" + tail());
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private String tail() {
        String all = stdout() + stderr();
        return all.length() > 4000 ? all.substring(all.length() - 4000) : all;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
