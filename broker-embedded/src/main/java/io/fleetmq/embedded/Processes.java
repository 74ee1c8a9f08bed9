package io.fleetmq.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Telling whether a server process still runs, and ending it with its children for certain. */
final class Processes {

    private static final Logger log = LoggerFactory.getLogger(Processes.class);
    private static final Path PROC = Path.of("/proc");
    private static final long POLL_MILLIS = 20;

    private Processes() {
    }

    /**
     * Alive and not a zombie. A process reparented to init may linger as a zombie until init reaps it: alive to
     * the JDK, but no longer holding files or ports. Where {@code /proc} exists its state says so; elsewhere a
     * zombie is recognised by its missing command line (which the JDK cannot read on Linux for some live
     * processes, such as a Debian {@code redis-server} that renamed itself).
     */
    static boolean running(ProcessHandle process) {
        if (!process.isAlive()) {
            return false;
        }
        Path stat = PROC.resolve(Long.toString(process.pid())).resolve("stat");
        if (Files.isDirectory(PROC)) {
            try {
                String line = Files.readString(stat, StandardCharsets.UTF_8);
                int end = line.lastIndexOf(')');
                char state = end >= 0 && end + 2 < line.length() ? line.charAt(end + 2) : '?';
                return state != 'Z' && state != 'X';
            } catch (IOException gone) {
                return false;
            }
        }
        return process.info().commandLine().isPresent();
    }

    /**
     * The command line as the process shows it now ({@code /proc/<pid>/cmdline} where it exists, which reflects a
     * renamed process title), or empty.
     */
    static String commandLine(ProcessHandle process) {
        Path cmdline = PROC.resolve(Long.toString(process.pid())).resolve("cmdline");
        try {
            if (Files.exists(cmdline)) {
                return new String(Files.readAllBytes(cmdline), StandardCharsets.UTF_8).replace('\0', ' ').strip();
            }
        } catch (IOException e) {
            // gone meanwhile, or not ours to read: fall back to what the JDK knows
        }
        return process.info().commandLine().orElse("");
    }

    /** Waits until {@code process} no longer runs; {@code false} if it still does after {@code timeout}. */
    static boolean awaitGone(ProcessHandle process, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (running(process)) {
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
                Thread.sleep(POLL_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !running(process);
        }
        return true;
    }

    /**
     * Ends {@code process}: SIGTERM if {@code term} is set, then SIGKILL once {@code termWait} has passed, then
     * SIGKILL for whatever it had started (a snapshot or rewrite child) that outlived it. Returns whether all of
     * them are gone within the waits.
     */
    static boolean end(String name, ProcessHandle process, boolean term, Duration termWait, Duration killWait) {
        List<ProcessHandle> children = process.descendants().toList();
        if (term) {
            process.destroy();
            if (awaitGone(process, termWait)) {
                return endChildren(name, children, killWait);
            }
            log.warn("{} (pid {}) did not exit within {} of SIGTERM; killing it", name, process.pid(), termWait);
        }
        process.destroyForcibly();
        boolean gone = awaitGone(process, killWait);
        if (!gone) {
            log.error("{} (pid {}) still runs {} after SIGKILL", name, process.pid(), killWait);
        }
        return endChildren(name, children, killWait) && gone;
    }

    private static boolean endChildren(String name, List<ProcessHandle> children, Duration killWait) {
        boolean allGone = true;
        for (ProcessHandle child : children) {
            if (running(child)) {
                log.warn("{}: killing pid {} that it left running", name, child.pid());
                child.destroyForcibly();
                allGone &= awaitGone(child, killWait);
            }
        }
        return allGone;
    }
}
