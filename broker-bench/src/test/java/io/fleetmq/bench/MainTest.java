package io.fleetmq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fleetmq.bench.probe.FileLimit;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The command line's contract with scripts: exit status and where text goes. Nothing here opens a socket. */
class MainTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void helpPrintsUsageOnStdoutAndSucceeds() {
        assertEquals(Main.EXIT_OK, run("--help"));
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("Usage: java -jar fleetmq-bench.jar"));
        assertEquals("", err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aBadCommandLineSaysWhyOnStderrWithStatus2() {
        assertEquals(Main.EXIT_USAGE, run("--scenario", "p2p", "--qos", "5"));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
        assertEquals("fleetmq-bench: --qos: 5 is outside 0 .. 2\nTry --help.\n",
                err.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
    }

    @Test
    void aFleetLargerThanTheOpenFileLimitIsRefusedBeforeAnyConnectionIsOpened() {
        long limit = FileLimit.current();
        assumeTrue(limit > 0 && limit < 999_000, "open-file limit " + limit + " is unknown or would allow the run");
        assertEquals(Main.EXIT_USAGE, run("--scenario", "idle", "--clients", "1000000", "--port", "1"));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
        String message = err.toString(StandardCharsets.UTF_8);
        assertTrue(message.startsWith("fleetmq-bench: the open-file limit is " + limit
                + ", but 1000000 connections need at least 1001000: raise it first, e.g. 'ulimit -n 1048576'"), message);
    }
}
