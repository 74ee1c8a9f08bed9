package io.fleetmq.persistence.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.testkit.TestServices;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Against the embedded Redis of the test kit. */
class Qos2ReceiptsTest {

    private static Redis redis;
    private static Qos2Receipts receipts;
    private static DeviceQueues queues;
    private static String prefix;

    @BeforeAll
    static void connect() {
        redis = Redis.connect(new RedisSettings(TestServices.shared().redisUrl(), Duration.ofSeconds(5)));
        prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + ":";
        receipts = new Qos2Receipts(redis.binaryCommands(), prefix);
        queues = new DeviceQueues(redis.binaryCommands(), prefix, 3, Duration.ofMinutes(10));
    }

    @AfterAll
    static void close() {
        redis.close();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> stage) {
        return stage.toCompletableFuture().join();
    }

    @Test
    void receiptsArePendingUntilReleased() {
        String c = "q2-pending";
        await(receipts.add(c, 7, Duration.ofMinutes(5)));
        await(receipts.add(c, 9, Duration.ofMinutes(5)));
        assertEquals(Set.of(7, 9), await(receipts.pending(c)));
        await(receipts.remove(c, 7));
        assertEquals(Set.of(9), await(receipts.pending(c)), "[MQTT-4.3.3-11] PUBREL frees the identifier");
        assertEquals(Set.of(), await(receipts.pending("q2-other")), "another client's receipts are its own");
    }

    @Test
    void theSessionsEndDeletesThem() {
        String c = "q2-ended";
        await(receipts.add(c, 1, Duration.ofMinutes(5)));
        await(receipts.delete(c));
        assertEquals(Set.of(), await(receipts.pending(c)));
    }

    @Test
    void theyExpireWithTheSession() {
        String c = "q2-ttl";
        await(receipts.add(c, 1, Duration.ofMinutes(5)));
        long ttl = redis.sync().pttl(receipts.key(c));
        long expected = Duration.ofMinutes(5).plus(Qos2Receipts.MARGIN).toMillis();
        assertTrue(ttl > expected - 60_000 && ttl <= expected, "TTL " + ttl + " ms, session expiry plus margin");
        await(receipts.touch(c, Duration.ofMinutes(1)));
        long touched = redis.sync().pttl(receipts.key(c));
        assertTrue(touched <= Duration.ofMinutes(1).plus(Qos2Receipts.MARGIN).toMillis(),
                "a DISCONNECT's shorter expiry counts: " + touched);
        await(receipts.touch("q2-none", Duration.ofMinutes(1)));
        assertEquals(0L, redis.sync().exists(receipts.key("q2-none")), "touching creates nothing");
    }

    @Test
    void aClientsReceiptsShareTheHashSlotOfItsQueue() {
        for (String client : new String[] {"a", "dev-17", "x{y}z"}) {
            int slot = SlotHash.getSlot(receipts.key(client));
            for (String key : queues.keysOf(client)) {
                assertEquals(slot, SlotHash.getSlot(key), client + ": " + key);
            }
        }
    }
}
