package io.fleetmq.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisBinaryTest {

    @TempDir
    Path dir;

    @Test
    void choicesAreReadWhateverTheirCaseAndBlankMeansAuto() {
        assertSame(RedisBinary.AUTO, RedisBinary.of(""));
        assertSame(RedisBinary.AUTO, RedisBinary.of(null));
        assertSame(RedisBinary.AUTO, RedisBinary.of(" Auto "));
        assertSame(RedisBinary.BUNDLED, RedisBinary.of("BUNDLED"));
        assertSame(RedisBinary.SYSTEM, RedisBinary.of("system"));
    }

    @Test
    void aPathMustBeAnExecutableFile() throws IOException {
        Path notExecutable = Files.writeString(dir.resolve("redis-server"), "#!/bin/sh\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RedisBinary.of(notExecutable.toString()));
        assertEquals("is neither auto, bundled, system nor an executable file", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RedisBinary.of(dir.resolve("missing").toString()));
    }

    @Test
    void aPathRunsThatFileAndItsVersionIsRead() {
        Path bundled = RedisBinary.BUNDLED.executable().toPath();
        RedisBinary byPath = RedisBinary.of(bundled.toString());

        assertEquals(bundled.toAbsolutePath(), byPath.executable().toPath());
        assertEquals(6, byPath.majorVersion(), "the bundled binary is Redis 6.2");
    }

    @Test
    void systemIsTheRedisServerOnThePath() {
        // Fails rather than skips without one: the system variants of the Redis tests must run (see README.md).
        assertTrue(RedisBinary.onSystemPath(), "redis-server is on the PATH; .ci/install-redis-server installs it");
        assertTrue(RedisBinary.SYSTEM.majorVersion() > 0, "redis-server --version names its version");
    }
}
