package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A persistent DEVICE subscriber connected to the node that writes its queue gets its messages
 * before they are stored in Redis: what it acknowledges is never written there, what it does not
 * acknowledge in time, or cannot take at once, is stored in order with the packet identifier it
 * went out with, and comes again with DUP on the next connection.
 */
class LiveDeliveryTest {

    /** Session Expiry Interval 300 s, as CONNECT properties with their length. */
    private static final String EXPIRY_300 = "05 11 00 00 01 2C";
    /** The same, and Receive Maximum 2. */
    private static final String EXPIRY_300_WINDOW_2 = "08 11 00 00 01 2C 21 00 02";
    private static final byte[] GOODBYE = RawMqtt.packet(0xE0, new byte[0]);
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        // A client that acknowledges at once does so within 2 s on a loaded machine too; at the
        // default 50 ms a pause of the test's JVM would store a message and fail the first test.
        broker = TestBroker.start(dataDir, Map.of("DEVICE_LIVE_ACK_WAIT", "2s"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static double acknowledged() {
        return broker.metric("fleetmq_device_queue_live_total", "outcome=\"acknowledged\"");
    }

    private static double stored() {
        return broker.metric("fleetmq_device_queue_live_total", "outcome=\"stored\"");
    }

    private static RawMqtt connect(String id, boolean cleanStart, boolean sessionPresent, String properties)
            throws Exception {
        RawMqtt raw = broker.raw();
        raw.socketTimeout(10_000);
        raw.send(RawMqtt.connect(5, cleanStart, 60, id, properties));
        RawMqtt.ConnAck connack = RawMqtt.parseConnAckV5(raw.readType(2));
        assertEquals(0, connack.reasonCode());
        assertEquals(sessionPresent, connack.sessionPresent());
        return raw;
    }

    /** A new persistent session subscribed to {@code topic}, once it takes its messages live. */
    private static RawMqtt subscribed(String id, String topic, String properties) throws Exception {
        broker.awaitNoLiveLanes();
        RawMqtt sub = connect(id, true, false, properties);
        sub.send(RawMqtt.subscribeV5(1, topic, 1));
        sub.readType(9);
        Await.until(WAIT, "the session takes its messages before they are stored",
                () -> broker.metric("fleetmq_device_queue_live_sessions", null) >= 1);
        return sub;
    }

    /** A connection right after gets nothing: nothing waits in the queue. */
    private static void nothingWaits(String id, String why) throws Exception {
        try (RawMqtt back = connect(id, false, true, EXPIRY_300)) {
            assertArrayEquals(RawMqtt.NOTHING, back.readWithin(1_000), why);
            back.send(GOODBYE);
        }
    }

    private static void publish(String id, String topic, int count) {
        Mqtt5BlockingClient pub = broker.connectedV5(id + "-pub");
        for (int i = 0; i < count; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(("m" + i).getBytes(StandardCharsets.UTF_8)).send();
        }
        pub.disconnect();
    }

    private static List<String> payloads(List<RawMqtt.Publish> publishes) {
        List<String> out = new ArrayList<>();
        for (RawMqtt.Publish p : publishes) {
            out.add(new String(p.payload(), StandardCharsets.UTF_8));
        }
        return out;
    }

    private static List<String> expected(int count) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add("m" + i);
        }
        return out;
    }

    private static List<RawMqtt.Publish> read(RawMqtt raw, int count, boolean ack) throws Exception {
        List<RawMqtt.Publish> got = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            RawMqtt.Publish p = RawMqtt.parsePublishV5(raw.readType(3));
            got.add(p);
            if (ack) {
                raw.send(RawMqtt.ack(0x40, p.packetId()));
            }
        }
        return got;
    }

    @Test
    void aSubscriberThatKeepsUpHasNothingWrittenToItsQueue() throws Exception {
        String id = "live-keeps-up";
        String topic = "live/" + id;
        double acknowledgedBefore = acknowledged();
        double storedBefore = stored();
        try (RawMqtt sub = subscribed(id, topic, EXPIRY_300)) {
            // Published while the subscriber reads and acknowledges each at once.
            java.util.concurrent.CompletableFuture<Void> published =
                    java.util.concurrent.CompletableFuture.runAsync(() -> publish(id, topic, 20));
            List<RawMqtt.Publish> got = read(sub, 20, true);
            published.get(20, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(expected(20), payloads(got), "every message, in order");
            got.forEach(p -> assertFalse(p.dup(), "sent once"));
            Await.until(WAIT, "all 20 settled", () -> acknowledged() - acknowledgedBefore + stored() - storedBefore >= 20);
            assertEquals(0, stored() - storedBefore, "none stored");
            assertEquals(20, acknowledged() - acknowledgedBefore, "all acknowledged before they were stored");
            sub.send(GOODBYE);
        }
        nothingWaits(id, "nothing waits in the queue");
    }

    @Test
    void messagesNotAcknowledgedInTimeAreStoredAndComeAgainWithTheirPacketIdentifiers() throws Exception {
        String id = "live-slow";
        String topic = "live/" + id;
        double storedBefore = stored();
        List<RawMqtt.Publish> first;
        try (RawMqtt sub = subscribed(id, topic, EXPIRY_300)) {
            publish(id, topic, 3);
            first = read(sub, 3, false);
            assertEquals(expected(3), payloads(first));
            // Unacknowledged past the bound: the session stores them, with the identifiers they went out with.
            Await.until(WAIT, "the unacknowledged messages stored", () -> stored() - storedBefore == 3);
        } // the connection ends without a DISCONNECT
        resentOnTheNextConnection(id, first);
    }

    /**
     * The next connection gets {@code first} again, in order, with DUP and the packet identifiers
     * they went out with, acknowledges them, and the one after it gets nothing.
     */
    private static void resentOnTheNextConnection(String id, List<RawMqtt.Publish> first) throws Exception {
        try (RawMqtt back = connect(id, false, true, EXPIRY_300)) {
            List<RawMqtt.Publish> again = read(back, first.size(), true);
            assertEquals(payloads(first), payloads(again), "again, in the order first sent");
            for (int i = 0; i < first.size(); i++) {
                assertTrue(again.get(i).dup(), "DUP on the resend [MQTT-3.3.1-1]");
                assertEquals(first.get(i).packetId(), again.get(i).packetId(),
                        "the packet identifier it went out with [MQTT-4.4.0-1]");
            }
            assertArrayEquals(RawMqtt.NOTHING, back.readWithin(1_000), "each once");
            back.send(GOODBYE);
        }
        nothingWaits(id, "acknowledged: not sent again");
    }

    @Test
    void whatTheConnectionHeldWhenItEndedComesAgainOnTheNextOne() throws Exception {
        String id = "live-gone";
        String topic = "live/" + id;
        List<RawMqtt.Publish> first;
        try (RawMqtt sub = subscribed(id, topic, EXPIRY_300)) {
            publish(id, topic, 3);
            first = read(sub, 3, false);
            sub.send(GOODBYE); // at once: stored at the connection's end if not at the bound before it
        }
        resentOnTheNextConnection(id, first);
    }

    @Test
    void aFullReceiveWindowSendsTheRestFromTheQueueInOrder() throws Exception {
        String id = "live-window";
        String topic = "live/" + id;
        double storedBefore = stored();
        try (RawMqtt sub = subscribed(id, topic, EXPIRY_300_WINDOW_2)) {
            publish(id, topic, 10);
            // Two go out at once, the window is full: the other eight cannot, and are stored first.
            Await.until(WAIT, "the messages the window did not take stored", () -> stored() - storedBefore >= 8);
            List<RawMqtt.Publish> got = read(sub, 10, true);
            assertEquals(expected(10), payloads(got), "every message once, in order");
            got.forEach(p -> assertFalse(p.dup(), "one connection: nothing sent twice"));
            assertArrayEquals(RawMqtt.NOTHING, sub.readWithin(1_000), "nothing more");
            sub.send(GOODBYE);
        }
        nothingWaits(id, "every entry removed once acknowledged");
    }

    @Test
    void messagesHeldWhenTheSessionEndsAreCountedAsDropped() throws Exception {
        String id = "live-ends";
        String topic = "live/" + id;
        double endedBefore = broker.dropped("session_ended");
        try (RawMqtt sub = subscribed(id, topic, EXPIRY_300)) {
            publish(id, topic, 3);
            read(sub, 3, false);
            // A clean start takes the session over: the old one ends with three messages unacknowledged.
            try (RawMqtt clean = connect(id, true, false, EXPIRY_300)) {
                Await.until(WAIT, "the three counted as dropped with the session",
                        () -> broker.dropped("session_ended") - endedBefore == 3);
                assertArrayEquals(RawMqtt.NOTHING, clean.readWithin(1_000), "the new session gets none of them");
                // The new session takes its own messages before they are stored, as any other.
                double acknowledgedBefore = acknowledged();
                clean.send(RawMqtt.subscribeV5(1, topic, 1));
                clean.readType(9);
                Await.until(WAIT, "the old session's messages settled, the new one taking its own",
                        () -> broker.metric("fleetmq_device_queue_live_held", null) == 0
                                && broker.metric("fleetmq_device_queue_live_sessions", null) >= 1);
                java.util.concurrent.CompletableFuture<Void> published =
                        java.util.concurrent.CompletableFuture.runAsync(() -> publish(id + "-2", topic, 2));
                assertEquals(expected(2), payloads(read(clean, 2, true)));
                published.get(20, java.util.concurrent.TimeUnit.SECONDS);
                Await.until(WAIT, "the new session's two acknowledged before they were stored",
                        () -> acknowledged() - acknowledgedBefore == 2);
                clean.send(GOODBYE);
            }
        }
    }
}
