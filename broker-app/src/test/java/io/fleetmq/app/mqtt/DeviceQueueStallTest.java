package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.embedded.EmbeddedRedisServer;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A DEVICE queue write that stalls holds the node's publishers although nothing arrives late: Redis
 * stops taking writes (as while it rewrites its append-only file), the message already stored in
 * Kafka cannot reach its queue, and the next PUBLISH waits instead of piling more behind it. Once
 * Redis takes writes again, both messages arrive, in order, and the held PUBLISH is acknowledged.
 * The node has a Redis of its own, so pausing it disturbs no other test.
 */
class DeviceQueueStallTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path workDir;

    private static EmbeddedRedisServer redis;
    private static TestBroker broker;
    private static RedisClient admin;
    private static StatefulRedisConnection<String, String> adminConnection;

    @BeforeAll
    static void start() throws Exception {
        redis = new EmbeddedRedisServer(workDir.resolve("redis"), "127.0.0.1", FreePorts.next());
        redis.start();
        admin = RedisClient.create(redis.url());
        adminConnection = admin.connect();
        broker = TestBroker.start(workDir.resolve("node"), Map.of(
                "REDIS_URL", redis.url(),
                "MQTT_PUBLISH_BACKPRESSURE_DELAY", "100ms",
                // Every message through its queue: a connected subscriber that keeps up otherwise
                // gets its messages before they are stored, and no Redis write is on its path.
                "DEVICE_LIVE_DELIVERY", "false",
                // A stall counts for the delay plus the longest wait: long enough here that the test
                // sees it whatever the machine's pace.
                "MQTT_PUBLISH_BACKPRESSURE_MAX_WAIT", "60s"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (adminConnection != null) {
            redisClient("UNPAUSE");
            adminConnection.close();
            admin.shutdown();
        }
        if (broker != null) {
            broker.close();
        }
        if (redis != null) {
            redis.stop();
        }
    }

    @Test
    void aStalledQueueWriteHoldsPublishersUntilRedisTakesWritesAgain() throws Exception {
        Mqtt5BlockingClient device = broker.v5("stall-device");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = device.publishes(MqttGlobalPublishFilter.ALL)) {
            device.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
            device.subscribeWith().topicFilter("stall/#").qos(MqttQos.AT_LEAST_ONCE).send();
            Mqtt5AsyncClient publisher = broker.connectedV5("stall-pub").toAsync();
            double stallsBefore = metric("fleetmq_publish_backpressure_stalls_total");
            double waitsBefore = broker.metric("fleetmq_publish_backpressure_waits_total", "outcome=\"caught_up\"");

            double lateBefore = metric("fleetmq_publish_backpressure_late_total");

            // Writes (the queue's append script among them) wait; reads go on. Ended by the test.
            assertEquals("OK", redisClient("PAUSE", "120000", "WRITE"));
            Mqtt5PublishResult first = publish(publisher, "m0").get(1, TimeUnit.MINUTES);
            assertSuccess(first);

            Await.until(WAIT, "the node is behind while the queue write stalls",
                    () -> metric("fleetmq_publish_backpressure_behind") == 1);
            assertTrue(metric("fleetmq_publish_backpressure_stalls_total") > stallsBefore, "the stall is counted");
            assertEquals(lateBefore, metric("fleetmq_publish_backpressure_late_total"),
                    "nothing arrived, late or not: the stall alone holds the publishers");
            CompletableFuture<Mqtt5PublishResult> held = publish(publisher, "m1");
            Await.until(WAIT, "the next PUBLISH waits", () -> metric("fleetmq_publish_backpressure_waiting") == 1);
            assertFalse(held.isDone(), "held, so not acknowledged");

            assertEquals("OK", redisClient("UNPAUSE"));
            assertSuccess(held.get(1, TimeUnit.MINUTES));
            assertEquals("m0", new String(Received.next(in).getPayloadAsBytes(), StandardCharsets.UTF_8));
            assertEquals("m1", new String(Received.next(in).getPayloadAsBytes(), StandardCharsets.UTF_8));
            Await.until(WAIT, "caught up", () -> metric("fleetmq_publish_backpressure_behind") == 0);
            assertEquals(0, metric("fleetmq_publish_backpressure_waiting"));
            assertTrue(broker.metric("fleetmq_publish_backpressure_waits_total", "outcome=\"caught_up\"") > waitsBefore,
                    "the held PUBLISH was released because the node caught up, not after the longest wait");
            publisher.disconnect().get(1, TimeUnit.MINUTES);
        }
        device.disconnect();
    }

    private static CompletableFuture<Mqtt5PublishResult> publish(Mqtt5AsyncClient publisher, String payload) {
        return publisher.publishWith().topic("stall/t").qos(MqttQos.AT_LEAST_ONCE)
                .payload(payload.getBytes(StandardCharsets.UTF_8)).send();
    }

    private static void assertSuccess(Mqtt5PublishResult r) {
        assertEquals(Mqtt5PubAckReasonCode.SUCCESS, ((Mqtt5PublishResult.Mqtt5Qos1Result) r).getPubAck().getReasonCode());
    }

    /** A {@code CLIENT} subcommand to the node's Redis. */
    private static String redisClient(String... args) {
        CommandArgs<String, String> a = new CommandArgs<>(StringCodec.UTF8);
        for (String arg : args) {
            a.add(arg);
        }
        return adminConnection.sync().dispatch(CommandType.CLIENT, new StatusOutput<>(StringCodec.UTF8), a);
    }

    private static double metric(String name) {
        return broker.metric(name, null);
    }
}
