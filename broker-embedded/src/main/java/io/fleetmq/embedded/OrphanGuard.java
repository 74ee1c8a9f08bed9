package io.fleetmq.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops a server process when the JVM that started it dies without stopping it (SIGKILL, the OOM killer), which
 * no shutdown hook survives. A small shell process waits on a pipe from this JVM; the operating system closes the
 * pipe when the JVM is gone, however it goes, and the shell then sends the server SIGTERM, and SIGKILL if it is
 * still there after {@value #KILL_AFTER_TENTHS} tenths of a second. A normal stop ends the guard first.
 *
 * <p>Where there is no {@code /bin/sh} the server is left to the next start on its data directory, which stops
 * a left-over server.
 */
final class OrphanGuard {

    private static final Logger log = LoggerFactory.getLogger(OrphanGuard.class);
    private static final Path SHELL = Path.of("/bin/sh");
    private static final int KILL_AFTER_TENTHS = 100;
    /** {@code read} returns only at end of input: nothing is ever written to the pipe. */
    private static final String SCRIPT = "read -r _; kill -TERM \"$1\" 2>/dev/null; i=0;"
            + " while kill -0 \"$1\" 2>/dev/null && [ $i -lt " + KILL_AFTER_TENTHS + " ]; do sleep 0.1; i=$((i+1)); done;"
            + " kill -KILL \"$1\" 2>/dev/null";

    /** Held so the pipe's write end stays open (it is closed when the Process becomes unreachable). */
    private final Process guard;

    private OrphanGuard(Process guard) {
        this.guard = guard;
    }

    /** Starts a guard for {@code server}, or returns {@code null} where none can run. */
    static OrphanGuard watch(String name, ProcessHandle server, List<String> sessionPrefix) {
        if (!Files.isExecutable(SHELL)) {
            return null;
        }
        List<String> command = new ArrayList<>(sessionPrefix);
        // In a session of its own, like the server: a signal to the broker's process group must not end it.
        command.addAll(List.of(SHELL.toString(), "-c", SCRIPT, "fleetmq-guard", Long.toString(server.pid())));
        try {
            Process guard = new ProcessBuilder(command)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return new OrphanGuard(guard);
        } catch (IOException e) {
            log.warn("{}: no guard against this JVM dying without stopping it ({})", name, e.toString());
            return null;
        }
    }

    /** Ends the guard without it touching the server; call before stopping the server. */
    void disarm() {
        guard.destroyForcibly();
        Processes.awaitGone(guard.toHandle(), Duration.ofSeconds(10));
    }

    long pid() {
        return guard.pid();
    }
}
