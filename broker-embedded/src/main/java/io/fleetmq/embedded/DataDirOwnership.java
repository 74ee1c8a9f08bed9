package io.fleetmq.embedded;

import java.io.IOException;
import java.nio.channels.Channel;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure one server process at a time works on a data dir, and cleans up after a JVM that died without
 * stopping its servers. Normal exits stop the child processes through shutdown hooks, but a killed JVM (SIGKILL,
 * the OOM killer, Kafka halting on a fatal error) leaves them running and holding the data dir: PostgreSQL would
 * refuse to start on it and a second Redis would write the same append-only file.
 *
 * <p>Whether the owner of a data dir is alive is decided by a file lock that it holds while its server runs; the
 * operating system releases it when the JVM dies, however it dies. File locks belong to the whole JVM and closing
 * any channel on a file drops them, so within one JVM the claims are tracked in memory instead, and a lock file is
 * only opened once this JVM is known not to hold it.
 */
final class DataDirOwnership {

    private static final Logger log = LoggerFactory.getLogger(DataDirOwnership.class);
    private static final Duration GRACE = Duration.ofSeconds(10);
    private static final Set<Path> claimed = new HashSet<>();

    private DataDirOwnership() {
    }

    /** Registers {@code dir} as used by a server of this JVM until {@link #release(Path)}. */
    static synchronized void claim(String service, Path dir) {
        if (!claimed.add(dir.toAbsolutePath().normalize())) {
            throw EmbeddedServiceException.of(service, dir + " is already used by an embedded " + service
                    + " of this process");
        }
    }

    static synchronized void release(Path dir) {
        claimed.remove(dir.toAbsolutePath().normalize());
    }

    /**
     * Takes the lock that tells other JVMs this data dir is in use; call only after {@link #claim}. The caller
     * keeps it while the server runs and releases it with {@link #unlock(FileLock)}.
     */
    static FileLock lock(String service, Path lockFile) {
        FileChannel channel;
        try {
            channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw EmbeddedServiceException.of(service, "cannot open " + lockFile + ": " + e.getMessage(), e);
        }
        try {
            FileLock lock = channel.tryLock();
            if (lock != null) {
                return lock;
            }
            closeQuietly(channel);
            throw EmbeddedServiceException.of(service, lockFile.getParent() + " is in use by another process");
        } catch (OverlappingFileLockException e) {
            // Only possible if something in this JVM besides these classes locked the file.
            closeQuietly(channel);
            throw EmbeddedServiceException.of(service, lockFile + " is locked by this process", e);
        } catch (IOException e) {
            closeQuietly(channel);
            throw EmbeddedServiceException.of(service, "cannot lock " + lockFile + ": " + e.getMessage(), e);
        }
    }

    static void unlock(FileLock lock) {
        closeQuietly(lock.acquiredBy());
    }

    /**
     * Fails if another live JVM holds {@code lockFile} (a lock its server keeps while running); call only after
     * {@link #claim}. A missing lock file means no server ever ran there.
     */
    static void requireNoLiveOwner(String service, Path lockFile) {
        if (Files.exists(lockFile)) {
            unlock(lock(service, lockFile));
        }
    }

    /**
     * Terminates the process named by the first line of {@code pidFile} if it is alive and {@code ours} accepts
     * it (the pid may have been reused by an unrelated process), and waits until it is gone. Call only once no
     * live JVM owns the data dir, so the process can only be left over from a dead one.
     */
    static void stopLeftOver(String service, Path pidFile, Predicate<ProcessHandle> ours) {
        Optional<ProcessHandle> leftOver = pid(pidFile)
                .flatMap(ProcessHandle::of)
                .filter(Processes::running)
                .filter(ours);
        if (leftOver.isEmpty()) {
            return;
        }
        ProcessHandle process = leftOver.get();
        log.warn("embedded {}: stopping pid {} that an earlier process left running on {}", service, process.pid(),
                pidFile.getParent());
        // SIGTERM: Redis flushes its append-only file and exits; PostgreSQL shuts down once its clients (of the
        // dead JVM) are gone.
        process.destroy();
        if (!awaitGone(process, pidFile)) {
            log.warn("embedded {}: pid {} still running after {}; killing it", service, process.pid(), GRACE);
            process.destroyForcibly();
            awaitGone(process, pidFile);
        }
    }

    /** Both servers delete their pid file as the last step of a clean exit; after a kill only the process ends. */
    private static boolean awaitGone(ProcessHandle process, Path pidFile) {
        long deadline = System.nanoTime() + GRACE.toNanos();
        try {
            while (Processes.running(process) && Files.exists(pidFile)) {
                if (System.nanoTime() > deadline) {
                    return false;
                }
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    private static Optional<Long> pid(Path pidFile) {
        try {
            List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
            return lines.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(lines.get(0).strip()));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static void closeQuietly(Channel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            log.debug("closing {} failed: {}", channel, e.toString());
        }
    }
}
