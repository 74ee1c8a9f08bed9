package io.fleetmq.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.persistence.redis.Redis;
import io.fleetmq.persistence.redis.RedisSettings;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TestServices;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Against the embedded Redis of the test kit. */
class RedisTest {

    @Test
    void connectsAndAnswers() {
        try (Redis redis = Redis.connect(new RedisSettings(TestServices.shared().redisUrl(), Duration.ofSeconds(2)))) {
            redis.sync().set("fleetmq:test:redis", "v");
            assertEquals("v", redis.sync().get("fleetmq:test:redis"));
            assertTrue(redis.healthCheck().check().up());
        }
    }

    @Test
    void unreachableRedisIsAOneLineErrorWithoutCredentials() {
        String url = "redis://admin:secret@127.0.0.1:" + FreePorts.next();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Redis.connect(new RedisSettings(url, Duration.ofSeconds(1))));
        assertTrue(e.getMessage().startsWith("cannot connect to Redis at redis://127.0.0.1:"), e.getMessage());
        assertFalse(e.getMessage().contains("secret"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void invalidUrlIsRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Redis.connect(new RedisSettings("http://nope", Duration.ofSeconds(1))));
        assertTrue(e.getMessage().startsWith("invalid Redis URL"), e.getMessage());
    }
}
