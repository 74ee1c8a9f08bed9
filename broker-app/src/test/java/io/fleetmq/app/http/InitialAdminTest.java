package io.fleetmq.app.http;

import static io.fleetmq.app.http.ApiTestNode.assertError;
import static io.fleetmq.app.http.ApiTestNode.body;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.testkit.Await;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The first admin user without a configured password, and tokens that expire. */
class InitialAdminTest {

    @TempDir
    Path dataDir;

    @Test
    void aGeneratedPasswordIsWrittenForTheOwnerOnlyAndLogsInAndItsTokenExpires() throws Exception {
        try (ApiTestNode node = new ApiTestNode(dataDir, Map.of("ADMIN_TOKEN_TTL", "2s"))) {
            Path file = dataDir.resolve("initial-admin-password");
            assertTrue(Files.isRegularFile(file), "the password file in the data directory");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            String password = Files.readString(file).strip();
            assertEquals(20, password.length(), "a generated password of 20 characters");

            assertError(node.login("admin", password + "x"), 401, "unauthorized", null);
            HttpResponse<String> login = node.login("admin", password);
            assertEquals(200, login.statusCode(), login.body());
            String token = body(login).path("token").asText();
            Instant expiresAt = Instant.parse(body(login).path("expiresAt").asText());
            assertTrue(expiresAt.isBefore(Instant.now().plusSeconds(3)), "ADMIN_TOKEN_TTL=2s: " + expiresAt);

            Await.until(Duration.ofSeconds(20), "the token to expire",
                    () -> node.get("/api/v1/credentials", token).statusCode() == 401);
            assertError(node.get("/api/v1/credentials", token), 401, "unauthorized", null);
        }
    }
}
