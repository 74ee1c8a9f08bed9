package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.app.support.PrivateDatabase;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.Credential;
import io.fleetmq.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two nodes of one cluster: a change written through one node reaches the clients connected to the
 * other within a second or so (rules, a deleted credential, a block).
 */
class ClusterSecurityTest {

    @TempDir
    static Path dir;
    static PrivateDatabase db;
    static TestBroker first;
    static TestBroker second;
    static SecurityFixture viaFirst;

    @BeforeAll
    static void start() throws IOException {
        db = PrivateDatabase.create();
        String prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + ".";
        Map<String, String> env = new HashMap<>(db.env());
        env.put("MQTT_ALLOW_ANONYMOUS", "false");
        env.put("KAFKA_TOPIC_PREFIX", prefix);
        env.put("BROKER_NODE_ID", "sec-1");
        first = TestBroker.start(java.nio.file.Files.createDirectories(dir.resolve("1")), env);
        env.put("BROKER_NODE_ID", "sec-2");
        second = TestBroker.start(java.nio.file.Files.createDirectories(dir.resolve("2")), env);
        viaFirst = new SecurityFixture(db, first);
    }

    @AfterAll
    static void stop() {
        if (second != null) {
            second.close();
        }
        if (first != null) {
            first.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Connects to the second node once it has learnt of the credential made through the first. */
    private static SecurityFixture.Connected connectToSecond(String clientId, String user) {
        SecurityFixture.Connected[] connected = new SecurityFixture.Connected[1];
        Await.until(Duration.ofSeconds(10), "the credential known on the second node", () -> {
            try {
                SecurityFixture.Connected c = SecurityFixture.connect(second.mqttPort(), 5, clientId, user, "pw");
                if (c.code() == 0x00) {
                    connected[0] = c;
                    return true;
                }
                c.close();
                return false;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        return connected[0];
    }

    @Test
    @DisplayName("A rule change and a credential deletion made on one node reach a client connected to the other")
    void rulesAndDeletionAcrossNodes() throws Exception {
        String user = unique("x");
        String base = unique("x");
        Credential cred = viaFirst.credential(user, null, "pw", List.of(base + "/#"), List.of());
        try (var c = connectToSecond(unique("x"), user)) {
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 1, base + "/a", "1"));
            viaFirst.update(cred, List.of(base + "/b"), List.of());
            int[] id = {2};
            Await.until(Duration.ofSeconds(10), "the new rules on the other node", () -> {
                try {
                    return SecurityFixture.publishQos1V5(c.raw(), id[0]++, base + "/a", "2") == 0x87;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            assertEquals(0x00, SecurityFixture.publishQos1V5(c.raw(), 100, base + "/b", "3"));
            viaFirst.delete(cred);
            byte[] disconnect = c.raw().readType(14);
            assertEquals(0x87, disconnect[2] & 0xFF, "DISCONNECT 0x87 from the other node");
        }
    }

    @Test
    @DisplayName("Blocking a client connected to the other node disconnects it there and refuses it on both")
    void blockAcrossNodes() throws Exception {
        String user = unique("y");
        viaFirst.credential(user, null, "pw", List.of(), List.of());
        String clientId = unique("y");
        try (var c = connectToSecond(clientId, user)) {
            BlockEntry e = viaFirst.block(BlockEntry.CLIENT_ID, clientId, null, null);
            byte[] disconnect = c.raw().readType(14);
            assertEquals(0x98, disconnect[2] & 0xFF);
            SecurityFixture.connect(second.mqttPort(), 5, clientId, user, "pw").expect(0x8A).close();
            SecurityFixture.connect(first.mqttPort(), 5, clientId, user, "pw").expect(0x8A).close();
            viaFirst.unblock(e);
        }
    }
}
