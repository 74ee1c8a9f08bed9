package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.persistence.redis.Redis;
import io.fleetmq.persistence.redis.RedisSettings;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.TestServices;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a session that never persists costs Redis: its start clears what an earlier session of the
 * client ID left (a DEVICE queue and QoS 2 receipts), and its end asks nothing, since nothing is
 * written to Redis for a session with expiry 0. A session that persisted is cleared at its end too.
 */
// Counts every script Redis runs: no other test may use the shared Redis meanwhile.
@org.junit.jupiter.api.parallel.Isolated
class ShortSessionRedisTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;
    private static Redis redis;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("KAFKA_TOPIC_PREFIX", "ss" + UUID.randomUUID().toString().substring(0, 6) + "."));
        redis = Redis.connect(new RedisSettings(TestServices.shared().redisUrl(), Duration.ofSeconds(5)));
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
        broker.close();
    }

    /**
     * Scripts run, as Redis counts them: clearing a DEVICE queue is one (the QoS 2 receipts' DEL is not
     * counted here, as Redis counts the commands scripts run among the DELs).
     */
    private static long deleteCalls() {
        long calls = 0;
        for (String line : redis.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:")) {
                int at = line.indexOf("calls=");
                calls += Long.parseLong(line.substring(at + 6, line.indexOf(',', at)));
            }
        }
        return calls;
    }

    @Test
    void aSessionWithExpiryZeroIsClearedInRedisAtItsStartOnly() {
        int cycles = 10;
        String id = "short-" + UUID.randomUUID().toString().substring(0, 6);
        long before = deleteCalls();
        for (int i = 0; i < cycles; i++) {
            Mqtt5BlockingClient c = broker.v5(id);
            c.connectWith().cleanStart(true).send();
            c.disconnect();
        }
        // The queue is cleared as each session starts; its end adds nothing. Waited for, as the last
        // session's commands may still be on their way when the client has closed.
        Await.until(Duration.ofSeconds(10), "the starts' commands", () -> deleteCalls() - before >= cycles);
        Mqtt5BlockingClient last = broker.v5(id);
        last.connectWith().cleanStart(true).send(); // after the last end: its command, if any, came before
        last.disconnect();
        Await.until(Duration.ofSeconds(10), "the last start's command", () -> deleteCalls() - before >= cycles + 1);
        assertEquals(cycles + 1, deleteCalls() - before, "one queue clearing per session start, none at its end");
    }

    @Test
    void aSessionThatPersistedIsClearedAtItsEndToo() {
        String id = "persisted-" + UUID.randomUUID().toString().substring(0, 6);
        Mqtt5BlockingClient c = broker.v5(id);
        c.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        long before = deleteCalls();
        c.disconnectWith().sessionExpiryInterval(0).send(); // ends the session now
        Await.until(Duration.ofSeconds(10), "the end's command", () -> deleteCalls() - before >= 1);
        assertTrue(deleteCalls() - before >= 1, "the queue is cleared as the session ends");
    }
}
