package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.persistence.redis.Redis;
import io.fleetmq.persistence.redis.RedisSettings;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.TestServices;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a session that never persists costs Redis: nothing, neither at its start nor at its end, since
 * nothing is written to Redis for a session with expiry 0. The store (a DEVICE queue and QoS 2
 * receipts) is cleared where a persistent session ends or begins: at its end, by the CONNECT that
 * ends it, and before a persistent session uses it, even one that goes on from a session that did
 * not persist.
 */
// Counts every script Redis runs: no other test may use the shared Redis meanwhile.
@org.junit.jupiter.api.parallel.Isolated
class ShortSessionRedisTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;
    private static Redis redis;
    /** The node's DEVICE queues as the test reads and plants them, under the node's key prefix. */
    private static DeviceQueues queues;

    @BeforeAll
    static void start() {
        String prefix = "ss" + UUID.randomUUID().toString().substring(0, 6) + ".";
        broker = TestBroker.start(dataDir, Map.of("KAFKA_TOPIC_PREFIX", prefix));
        redis = Redis.connect(new RedisSettings(TestServices.shared().redisUrl(), Duration.ofSeconds(5)));
        queues = new DeviceQueues(redis.binaryCommands(), prefix, 1000, Duration.ofMinutes(5));
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
        broker.close();
    }

    /** Scripts run, as Redis counts them: clearing a DEVICE queue is one, reading it another. */
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
    void aSessionWithExpiryZeroCostsRedisNothing() {
        int cycles = 20;
        String id = "short-" + UUID.randomUUID().toString().substring(0, 6);
        long before = deleteCalls();
        for (int i = 0; i < cycles; i++) {
            Mqtt5BlockingClient c = broker.v5(id);
            c.connectWith().cleanStart(true).send();
            c.disconnect();
        }
        // A persistent session of the same client ID clears the store and reads its queue: a few
        // scripts. They reach Redis over the node's connection after any the sessions before it sent,
        // so once the first is counted, one per earlier session would be too.
        Mqtt5BlockingClient persistent = broker.v5(id);
        persistent.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        Await.until(Duration.ofSeconds(10), "the persistent start's scripts", () -> deleteCalls() - before >= 1);
        long scripts = deleteCalls() - before;
        assertTrue(scripts < cycles, "the " + cycles + " sessions without expiry ran none of the " + scripts + " scripts");
        persistent.disconnectWith().sessionExpiryInterval(0).send();
    }

    @Test
    void aCleanStartWithoutExpiryEndsThePersistentSessionsQueueAndCountsIt() {
        String id = "ended-" + UUID.randomUUID().toString().substring(0, 6);
        String topic = "ss/" + id;
        Mqtt5BlockingClient sub = broker.v5(id);
        sub.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
        sub.disconnect();
        Mqtt5BlockingClient pub = broker.connectedV5("ended-pub-" + id);
        for (int i = 0; i < 3; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
        }
        pub.disconnect();
        Await.until(Duration.ofSeconds(10), "three messages queued", () -> queued(id) == 3);
        double dropped = broker.dropped("session_ended");

        Mqtt5BlockingClient again = broker.v5(id);
        assertFalse(again.connectWith().cleanStart(true).send().isSessionPresent());
        Await.until(Duration.ofSeconds(10), "the queue deleted", () -> queued(id) == 0);
        Await.until(Duration.ofSeconds(10), "its messages counted", () -> broker.dropped("session_ended") >= dropped + 3);
        assertEquals(dropped + 3, broker.dropped("session_ended"));
        again.disconnect();
    }

    @Test
    void aSessionThatDidNotPersistClearsTheStoreWhenItGoesOnAsOneThatDoes() throws Exception {
        String id = "goes-on-" + UUID.randomUUID().toString().substring(0, 6);
        Mqtt5BlockingClient shortLived = broker.v5(id);
        shortLived.connectWith().cleanStart(true).send();
        // What an earlier session's late write left in the queue: not this session's.
        queues.append(id, 0, 42, new byte[] {1, 2, 3}).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(1, queued(id));
        double dropped = broker.dropped("session_ended");

        Mqtt5BlockingClient persistent = broker.v5(id); // takes the live session over and persists it
        assertTrue(persistent.connectWith().cleanStart(false).sessionExpiryInterval(300).send().isSessionPresent());
        // Deleted with the store, not read as the session's own (it is no message at all).
        Await.until(Duration.ofSeconds(10), "the leftover deleted",
                () -> queued(id) == 0 && broker.dropped("session_ended") >= dropped + 1);
        assertEquals(dropped + 1, broker.dropped("session_ended"));
        persistent.disconnectWith().sessionExpiryInterval(0).send();
    }

    private static long queued(String clientId) {
        try {
            return queues.size(clientId).toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
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
