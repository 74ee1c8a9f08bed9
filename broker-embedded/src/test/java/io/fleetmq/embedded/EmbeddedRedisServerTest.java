package io.fleetmq.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each test runs with the bundled binary and with {@code redis-server} from the PATH (which must be installed:
 * the system variant fails rather than skips without it), since the two differ in version and in how they behave
 * on shutdown.
 */
class EmbeddedRedisServerTest {

    private static final Duration EXIT_WAIT = Duration.ofSeconds(30);
    private static final String KEY = "fleetmq:greeting";

    @TempDir
    Path dataDir;

    private RedisClient client;
    private EmbeddedRedisServer server;

    @BeforeEach
    void createClient() {
        client = RedisClient.create();
    }

    @AfterEach
    void stopAll() {
        client.shutdown(0, 5, TimeUnit.SECONDS);
        if (server != null) {
            server.stop();
        }
    }

    @ParameterizedTest(name = "{0} binary")
    @ValueSource(strings = {"bundled", "system"})
    void keepsKeysAcrossRestart(String binary) {
        server = start(binary);
        assertEquals("redis://127.0.0.1:" + server.port(), server.url());
        write("hello across restarts");
        ProcessHandle process = process(server);

        server.stop();

        assertFalse(Processes.running(process), "stop() returns once the process is gone");
        assertNull(server.url());
        assertTrue(Files.exists(dataDir.resolve("redis").resolve("dump.rdb")), "SHUTDOWN SAVE writes a snapshot");
        server = start(binary);
        assertEquals("hello across restarts", read());
    }

    @ParameterizedTest(name = "{0} binary")
    @ValueSource(strings = {"bundled", "system"})
    void keepsEveryWriteInTheAppendOnlyFileAndRewritesItFrom256Megabytes(String binary) {
        server = start(binary);
        try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(server.url()))) {
            var commands = connection.sync();
            assertEquals("yes", commands.configGet("appendonly").get("appendonly"));
            assertEquals("everysec", commands.configGet("appendfsync").get("appendfsync"));
            assertEquals(Long.toString(256L << 20),
                    commands.configGet("auto-aof-rewrite-min-size").get("auto-aof-rewrite-min-size"));
        }
    }

    @ParameterizedTest(name = "{0} binary")
    @ValueSource(strings = {"bundled", "system"})
    void sigtermStopsTheServerAndKeepsItsWrites(String binary) {
        server = start(binary);
        write("kept through SIGTERM");
        ProcessHandle process = process(server);

        assertTrue(process.destroy(), "SIGTERM sent");

        assertTrue(Processes.awaitGone(process, EXIT_WAIT), "redis-server exits on SIGTERM");
        server.stop();
        server = start(binary);
        assertEquals("kept through SIGTERM", read());
    }

    @ParameterizedTest(name = "{0} binary")
    @ValueSource(strings = {"bundled", "system"})
    void sigtermStopsTheServerWhoseDataDirectoryIsGone(String binary) throws IOException {
        server = start(binary);
        write("in a directory about to be deleted");
        ProcessHandle process = process(server);
        deleteRecursively(server.workDir());

        assertTrue(process.destroy(), "SIGTERM sent");

        // With snapshot save points it would try to save on SIGTERM, fail for the missing directory and go on.
        assertTrue(Processes.awaitGone(process, EXIT_WAIT), "redis-server exits on SIGTERM without its directory");
    }

    @ParameterizedTest(name = "{0} binary")
    @ValueSource(strings = {"bundled", "system"})
    void stopEndsTheServerWhoseDataDirectoryIsGone(String binary) throws IOException {
        server = start(binary);
        write("in a directory about to be deleted");
        ProcessHandle process = process(server);
        deleteRecursively(server.workDir());

        server.stop();

        assertFalse(server.isRunning());
        assertFalse(Processes.running(process), "stop() returns once the process is gone");
        assertTrue(process.descendants().noneMatch(Processes::running), "nothing it started is left");
    }

    private EmbeddedRedisServer start(String binary) {
        RedisBinary choice = RedisBinary.of(binary);
        EmbeddedRedisServer started = new EmbeddedRedisServer(dataDir, "127.0.0.1", 0, choice);
        started.start();
        assertRunsBinary(choice, ProcessHandle.of(started.pid()).orElseThrow());
        return started;
    }

    /** The process runs the chosen file (through links: Debian's redis-server links to redis-check-rdb). */
    static void assertRunsBinary(RedisBinary choice, ProcessHandle process) {
        try {
            Path expected = choice.executable().toPath().toRealPath();
            Path actual = Path.of(process.info().command().orElseThrow()).toRealPath();
            assertEquals(expected, actual, "redis-server pid " + process.pid() + " runs the " + choice + " binary");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private ProcessHandle process(EmbeddedRedisServer running) {
        ProcessHandle process = ProcessHandle.of(running.pid()).orElseThrow();
        assertTrue(Processes.running(process));
        return process;
    }

    private void write(String value) {
        try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(server.url()))) {
            connection.sync().set(KEY, value);
        }
    }

    private String read() {
        try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(server.url()))) {
            return connection.sync().get(KEY);
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
        assertFalse(Files.exists(dir));
    }
}
