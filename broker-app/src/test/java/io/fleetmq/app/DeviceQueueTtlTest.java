package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.Received;
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

/** A DEVICE queue lives {@code DEVICE_QUEUE_TTL} after its last message, then it is gone. */
class DeviceQueueTtlTest {

    @TempDir
    static Path dataDir;

    private static final String PREFIX = "ttl" + UUID.randomUUID().toString().substring(0, 6) + ".";
    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("DEVICE_QUEUE_TTL", "2s", "KAFKA_TOPIC_PREFIX", PREFIX));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void aQueueOlderThanItsTtlIsGoneAndTheDeviceGetsNothingOfIt() throws Exception {
        Mqtt5BlockingClient dev = broker.v5("ttl-device");
        dev.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        dev.subscribeWith().topicFilter("ttl/t").qos(MqttQos.AT_LEAST_ONCE).send();
        dev.disconnect();

        Mqtt5BlockingClient pub = broker.connectedV5("ttl-pub");
        try (Redis redis = Redis.connect(new RedisSettings(TestServices.shared().redisUrl(), Duration.ofSeconds(5)))) {
            String index = PREFIX + "q:{ttl-device}:i";
            // Published until the queue holds it (the subscription reaches the router a moment after SUBACK).
            Await.until(Duration.ofSeconds(30), "the message in the device's queue", () -> {
                pub.publishWith().topic("ttl/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {1}).send();
                return redis.sync().exists(index) == 1;
            });
            long ttl = redis.sync().pttl(index);
            // DEVICE_QUEUE_TTL (2 s) and its slack, a hundredth of it.
            assertTrue(ttl > 0 && ttl <= 2_020, "the queue expires within DEVICE_QUEUE_TTL: " + ttl + " ms");
            Await.until(Duration.ofSeconds(30), "the queue to expire", () -> redis.sync().exists(index) == 0);
        }
        pub.disconnect();

        try (Mqtt5BlockingClient.Mqtt5Publishes in = dev.publishes(MqttGlobalPublishFilter.ALL)) {
            assertTrue(dev.connectWith().cleanStart(false).sessionExpiryInterval(300).send().isSessionPresent(),
                    "the session outlives its queue");
            assertTrue(Received.nothingWithin(in, 1_500), "nothing of the expired queue is sent");
        }
        dev.disconnectWith().sessionExpiryInterval(0).send();
    }
}
