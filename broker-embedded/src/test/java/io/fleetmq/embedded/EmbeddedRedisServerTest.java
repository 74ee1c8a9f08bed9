package io.fleetmq.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedRedisServerTest {

    @TempDir
    Path dataDir;

    private RedisClient client;

    @BeforeEach
    void createClient() {
        client = RedisClient.create();
    }

    @AfterEach
    void shutdownClient() {
        client.shutdown(0, 5, TimeUnit.SECONDS);
    }

    @Test
    void keepsKeysAcrossRestart() {
        EmbeddedRedisServer server = new EmbeddedRedisServer(dataDir, "127.0.0.1", 0);
        server.start();
        try {
            assertEquals("redis://127.0.0.1:" + server.port(), server.url());
            try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(server.url()))) {
                connection.sync().set("fleetmq:greeting", "hello across restarts");
            }
        } finally {
            server.stop();
        }
        assertNull(server.url());
        assertTrue(Files.exists(dataDir.resolve("redis").resolve("dump.rdb")), "SHUTDOWN SAVE writes a snapshot");

        EmbeddedRedisServer restarted = new EmbeddedRedisServer(dataDir, "127.0.0.1", 0);
        restarted.start();
        try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(restarted.url()))) {
            assertEquals("hello across restarts", connection.sync().get("fleetmq:greeting"));
        } finally {
            restarted.stop();
        }
    }
}
