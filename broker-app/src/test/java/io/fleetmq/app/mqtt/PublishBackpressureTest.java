package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overload backpressure on a real node: with a delay of 1 ms every message the routing consumer
 * reads back from Kafka before routing it arrives late, so the node holds its publishers' PUBLISH
 * packets again and again. They are held, not lost: every one is acknowledged and delivered, in
 * order, and the waits are counted. In the first case a persistent DEVICE session subscribes too,
 * so every message also goes to a queue and is routed by the consumer, not when its write is
 * confirmed; in the second a persistent DEVICE session is the only subscriber, in the third a
 * persistent APPLICATION session.
 */
class PublishBackpressureTest {

    /** At least this many messages are published, and at most {@link #MOST_MESSAGES} until one waited. */
    private static final int MESSAGES = 2_000;
    private static final int MOST_MESSAGES = 100_000;
    /** PUBLISH packets the publisher has in flight at most. */
    private static final int WINDOW = 256;

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of(
                "MQTT_PUBLISH_BACKPRESSURE_DELAY", "1ms",
                "MQTT_PUBLISH_BACKPRESSURE_MAX_WAIT", "200ms",
                "APPLICATION_CLIENT_ID_PATTERN", "bapp-.*"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void heldPublishesAreAcknowledgedAndDeliveredInOrderAndTheWaitsAreCounted() throws Exception {
        Mqtt5BlockingClient queued = broker.v5("bp-queued");
        queued.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
        queued.subscribeWith().topicFilter("bp/#").qos(MqttQos.AT_LEAST_ONCE).send();
        Mqtt5BlockingClient subscriber = broker.connectedV5("bp-sub");
        double waitsBefore = waits();
        double lateBefore = late();
        try (Mqtt5BlockingClient.Mqtt5Publishes in = subscriber.publishes(MqttGlobalPublishFilter.ALL)) {
            subscriber.subscribeWith().topicFilter("bp/#").qos(MqttQos.AT_LEAST_ONCE).send();
            publishUntilHeld("bp-pub", "bp/t", in, waitsBefore);
        }
        assertTrue(late() > lateBefore, "deliveries later than 1 ms were counted: " + late());
        assertHeldAndNothingDropped(waitsBefore);
        queued.disconnect();
    }

    /**
     * A persistent DEVICE subscriber alone: its messages reach it through its queue in Redis, and
     * the queue's notices arriving late hold the publisher as late deliveries do.
     */
    @Test
    void lateDeviceQueueNoticesHoldThePublisher() throws Exception {
        Mqtt5BlockingClient device = broker.v5("bq-device");
        double waitsBefore = waits();
        try (Mqtt5BlockingClient.Mqtt5Publishes in = device.publishes(MqttGlobalPublishFilter.ALL)) {
            device.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
            device.subscribeWith().topicFilter("bq/#").qos(MqttQos.AT_LEAST_ONCE).send();
            publishUntilHeld("bq-pub", "bq/t", in, waitsBefore);
        }
        assertHeldAndNothingDropped(waitsBefore);
        device.disconnect();
    }

    /**
     * A persistent APPLICATION subscriber alone: its messages reach it through its backlog in Kafka,
     * and their writes into the backlog, stored late, hold the publisher as late deliveries do.
     */
    @Test
    void lateWritesIntoAnApplicationBacklogHoldThePublisher() throws Exception {
        Mqtt5BlockingClient app = broker.v5("bapp-1");
        double waitsBefore = waits();
        double lateBefore = late();
        try (Mqtt5BlockingClient.Mqtt5Publishes in = app.publishes(MqttGlobalPublishFilter.ALL)) {
            app.connectWith().cleanStart(true).sessionExpiryInterval(300).send();
            app.subscribeWith().topicFilter("ba/#").qos(MqttQos.AT_LEAST_ONCE).send();
            publishUntilHeld("ba-pub", "ba/t", in, waitsBefore);
        }
        assertTrue(late() > lateBefore, "backlog writes later than 1 ms were counted: " + late());
        assertHeldAndNothingDropped(waitsBefore);
        app.disconnect();
    }

    /**
     * A persistent DEVICE subscriber that takes its messages before they are stored, with a window
     * of two it does not acknowledge: the rest are stored by its session, and sent from the queue
     * later. Each message arrives once, when it is handed over: storing it later, because the
     * client is slow, is not a second, later arrival that would hold publishers for that client.
     */
    @Test
    void aMessageStoredBecauseTheClientIsSlowArrivesOnce() throws Exception {
        String topic = "bl/t";
        double lateBefore = late();
        double storedBefore = broker.metric("fleetmq_device_queue_live_total", "outcome=\"stored\"");
        broker.awaitNoLiveLanes();
        try (RawMqtt sub = broker.raw()) {
            sub.socketTimeout(10_000);
            // Session Expiry Interval 300 s, Receive Maximum 2
            sub.send(RawMqtt.connect(5, true, 60, "bl-device", "08 11 00 00 01 2C 21 00 02"));
            assertEquals(0, RawMqtt.parseConnAckV5(sub.readType(2)).reasonCode());
            sub.send(RawMqtt.subscribeV5(1, topic, 1));
            sub.readType(9);
            Await.until(Duration.ofSeconds(20), "the session takes its messages before they are stored",
                    () -> broker.metric("fleetmq_device_queue_live_sessions", null) >= 1);
            Mqtt5BlockingClient pub = broker.connectedV5("bl-pub");
            for (int i = 0; i < 10; i++) {
                pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {(byte) i}).send();
            }
            pub.disconnect();
            Await.until(Duration.ofSeconds(20), "the eight the window did not take stored by the session",
                    () -> broker.metric("fleetmq_device_queue_live_total", "outcome=\"stored\"") - storedBefore >= 8);
            for (int i = 0; i < 10; i++) {
                RawMqtt.Publish p = RawMqtt.parsePublishV5(sub.readType(3));
                assertEquals(i, p.payload()[0], "in order");
                sub.send(RawMqtt.ack(0x40, p.packetId()));
            }
            sub.send(RawMqtt.packet(0xE0, new byte[0]));
        }
        double late = late() - lateBefore;
        assertTrue(late >= 1 && late <= 10, "each of the ten late once at most (a delay of 1 ms): " + late);
    }

    /**
     * Publishes numbered QoS 1 messages with a window of PUBLISH packets in flight, so new ones keep
     * reaching the node while late deliveries come in, and stops once one of them was held (the node
     * is behind for only half the delay after a late arrival, so a burst sent at once could all be
     * read before the first delivery is late). Then every one is acknowledged with success and
     * arrives at {@code in} once, in order.
     */
    private static void publishUntilHeld(String clientId, String topic, Mqtt5BlockingClient.Mqtt5Publishes in,
            double waitsBefore) throws Exception {
        Mqtt5AsyncClient publisher = broker.connectedV5(clientId).toAsync();
        List<CompletableFuture<Mqtt5PublishResult>> acks = new ArrayList<>();
        Semaphore window = new Semaphore(WINDOW);
        int sent = 0;
        while (sent < MESSAGES || sent % 200 != 0 || (sent < MOST_MESSAGES && waits() <= waitsBefore)) {
            assertTrue(window.tryAcquire(2, TimeUnit.MINUTES), "a PUBACK within two minutes");
            acks.add(publisher.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(ByteBuffer.allocate(4).putInt(0, sent)).send()
                    .whenComplete((r, e) -> window.release()));
            sent++;
        }
        for (CompletableFuture<Mqtt5PublishResult> ack : acks) {
            Mqtt5PublishResult.Mqtt5Qos1Result r = (Mqtt5PublishResult.Mqtt5Qos1Result) ack.get(2, TimeUnit.MINUTES);
            assertEquals(Mqtt5PubAckReasonCode.SUCCESS, r.getPubAck().getReasonCode());
        }
        for (int i = 0; i < sent; i++) {
            Mqtt5Publish m = Received.next(in);
            assertEquals(i, ByteBuffer.wrap(m.getPayloadAsBytes()).getInt(), "in order, none lost");
        }
        publisher.disconnect().get(1, TimeUnit.MINUTES);
    }

    /** The publisher's PUBLISH packets waited, no one waits any more, and nothing was dropped. */
    private static void assertHeldAndNothingDropped(double waitsBefore) {
        assertTrue(waits() > waitsBefore, "the publisher's PUBLISH packets waited: " + waits());
        assertEquals(0, broker.metric("fleetmq_publish_backpressure_waiting", null), "nobody is left waiting");
        assertEquals(0, broker.dropped("session_queue_full") + broker.dropped("publish_not_stored"));
    }

    private static double late() {
        return broker.metric("fleetmq_publish_backpressure_late_total", null);
    }

    private static double waits() {
        return broker.metric("fleetmq_publish_backpressure_waits_total", "outcome=\"caught_up\"")
                + broker.metric("fleetmq_publish_backpressure_waits_total", "outcome=\"max_wait\"");
    }
}
