package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.Persisted;
import io.fleetmq.testkit.FreePorts;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code services} keeps the database password out of its standard output (which ends up in CI logs
 * and terminals) and in a file only its owner can read. Only the embedded PostgreSQL is started here;
 * Kafka and Redis "point elsewhere", which is enough to skip them.
 */
class ServicesOutputTest {

    @TempDir
    Path dir;

    @Test
    void thePasswordGoesOnlyToAnOwnerOnlyFile() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("BROKER_DATA_DIR", dir.toString());
        env.put("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9");
        env.put("REDIS_URL", "redis://127.0.0.1:9");
        env.put("EMBEDDED_POSTGRES_PORT", String.valueOf(FreePorts.next()));
        Path envFile = dir.resolve(Launcher.SERVICES_ENV);
        // An old, world-readable file from an earlier run must not keep its mode.
        Files.writeString(envFile, "OLD=1\n");
        Files.setPosixFilePermissions(envFile, PosixFilePermissions.fromString("rw-r--r--"));

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (AutoCloseable services = new Launcher(env::get, new PrintStream(bytes, true, StandardCharsets.UTF_8))
                .run("services")) {
            String out = bytes.toString(StandardCharsets.UTF_8);
            Map<String, String> file = Persisted.parseEnvLines(Files.readString(envFile));
            String password = file.get("DATABASE_PASSWORD");
            assertNotNull(password, "services.env holds the password");
            assertFalse(password.isEmpty());
            assertFalse(out.contains(password), out);
            assertFalse(out.contains("DATABASE_PASSWORD="), out);
            assertTrue(out.contains(Launcher.SERVICES_READY) && out.contains(envFile.toAbsolutePath().toString()), out);
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(envFile)));

            // What stdout names plus the file is all a node needs.
            Map<String, String> printed = Persisted.parseEnvLines(out);
            assertEquals(file.get("DATABASE_URL"), printed.get("DATABASE_URL"));
            try (Connection c = DriverManager.getConnection(printed.get("DATABASE_URL"), printed.get("DATABASE_USER"),
                    password)) {
                assertTrue(c.isValid(5));
            }
        }
    }
}
