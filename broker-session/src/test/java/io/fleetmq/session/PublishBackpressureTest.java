package io.fleetmq.session;

import static io.fleetmq.session.SessionHarness.ack;
import static io.fleetmq.session.SessionHarness.publish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.Packet.AckType;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Sessions hold their clients' new PUBLISH packets, unacknowledged and in order, while messages of
 * this node's publishers reach subscribers' sessions late; they go on once deliveries caught up, or
 * after the longest wait. A subscriber that is slow itself holds no one.
 */
class PublishBackpressureTest {

    private final SessionHarness h = SessionHarness.withBackpressure(Duration.ofMillis(100), Duration.ofSeconds(1));

    /** A message of {@code publisher} the node received {@code agoMillis} before now. */
    private BrokerMessage receivedAgo(String publisher, long agoMillis) {
        return new BrokerMessage("t/late", new byte[] {1}, 1, false, publisher, h.now - agoMillis,
                BrokerMessage.NO_EXPIRY, BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null, List.of());
    }

    private List<String> appendedTopics() {
        return h.publishLog.appended.stream().map(BrokerMessage::topic).toList();
    }

    @Test
    void publishesWaitUnacknowledgedAndInOrderUntilDeliveriesCaughtUp() {
        RecordingConnection pub = h.connect("pub", true, 0, 10);
        RecordingConnection sub = h.connect("sub", true, 0, 10);
        h.deliver("sub", receivedAgo("pub", 150), 1);
        assertTrue(h.backpressure.behind(), "a message of a publisher on this node came 150 ms after its receipt");

        h.send("pub", pub, publish("t/1", 1, 1, false));
        h.send("pub", pub, publish("t/2", 0, 0, false));
        h.send("pub", pub, new Packet.PingReq());
        h.send("pub", pub, publish("t/3", 1, 2, false));
        assertEquals(List.of(), appendedTopics(), "nothing goes to Kafka while deliveries are late");
        assertEquals(List.of(), pub.written(Packet.Ack.class));
        assertEquals(0, pub.settled);
        assertEquals(1, pub.written(Packet.PingResp.class).size(), "PINGREQ is answered past the held PUBLISH");

        h.advance(40);
        assertEquals(List.of(), appendedTopics(), "the late delivery is the newest arrival");
        h.deliver("sub", receivedAgo("pub", 20), 1);
        assertEquals(List.of(), appendedTopics(), "released at the next check, not at once");
        h.advance(10);
        assertEquals(List.of("t/1", "t/2", "t/3"), appendedTopics(), "in the order the client sent them");
        h.publishLog.storeAll();
        h.actors.runAll();
        assertEquals(List.of(1, 2), pub.written(Packet.Ack.class).stream().map(Packet.Ack::packetId).toList());
        assertEquals(3, pub.settled);
        assertEquals(1, h.meters.get("fleetmq.publish.backpressure.waits").tag("outcome", "caught_up").counter().count());
        assertEquals(2, sub.written(Packet.Publish.class).size(), "late messages are delivered all the same");
    }

    @Test
    void aClientThatAlsoSubscribesGoesOnReceivingWhileItsPublishWaits() {
        RecordingConnection both = h.connect("both", true, 0, 1); // one message in flight to it at a time
        h.send("both", both, publish("t/0", 2, 7, false)); // stored before the node fell behind
        h.publishLog.storeAll();
        h.actors.runAll();
        assertEquals(List.of(AckType.PUBREC), both.written(Packet.Ack.class).stream().map(Packet.Ack::type).toList());

        h.deliver("both", receivedAgo("both", 150), 1);
        assertTrue(h.backpressure.behind());
        h.deliver("both", receivedAgo("both", 150), 1);
        assertEquals(1, both.written(Packet.Publish.class).size(), "the second waits for the client's window");

        h.send("both", both, publish("t/1", 1, 1, false)); // held: deliveries are late
        h.send("both", both, ack(AckType.PUBACK, both.written(Packet.Publish.class).get(0).packetId()));
        assertEquals(2, both.written(Packet.Publish.class).size(),
                "its PUBACK of a delivery went past its own held PUBLISH and opened its window");
        h.send("both", both, ack(AckType.PUBREL, 7));
        assertEquals(List.of("t/0"), appendedTopics());
        assertEquals(1, both.written(Packet.Ack.class).size(), "PUBREL stays in order behind the held PUBLISH");

        h.advance(50); // no arrival for half the delay: no longer behind
        assertEquals(List.of("t/0", "t/1"), appendedTopics());
        h.publishLog.storeAll();
        h.actors.runAll();
        assertEquals(List.of(AckType.PUBREC, AckType.PUBCOMP, AckType.PUBACK),
                both.written(Packet.Ack.class).stream().map(Packet.Ack::type).toList());
    }

    @Test
    void afterTheLongestWaitHeldPublishesGoOnThoughDeliveriesAreStillLate() {
        RecordingConnection pub = h.connect("pub", true, 0, 10);
        h.connect("sub", true, 0, 1_000);
        h.deliver("sub", receivedAgo("pub", 500), 1);
        h.send("pub", pub, publish("t/1", 1, 1, false));
        h.send("pub", pub, publish("t/2", 1, 2, false));
        for (int i = 0; i < 24; i++) {
            h.advance(40);
            h.deliver("sub", receivedAgo("pub", 500), 1);
        }
        assertEquals(List.of(), appendedTopics(), "960 ms");
        h.advance(40);
        assertEquals(List.of("t/1", "t/2"), appendedTopics(), "slowed, never stopped");
        assertTrue(h.backpressure.behind());
        assertEquals(1, h.meters.get("fleetmq.publish.backpressure.waits").tag("outcome", "max_wait").counter().count());

        h.send("pub", pub, publish("t/3", 1, 3, false));
        assertEquals(List.of("t/1", "t/2"), appendedTopics(), "a new PUBLISH while still behind waits again");
    }

    @Test
    void withoutArrivalsTheWaitEndsAfterHalfTheDelay() {
        RecordingConnection pub = h.connect("pub", true, 0, 10);
        h.connect("sub", true, 0, 10);
        h.deliver("sub", receivedAgo("pub", 150), 1);
        h.send("pub", pub, publish("t/1", 1, 1, false));
        h.advance(40);
        assertEquals(List.of(), appendedTopics());
        h.advance(10);
        assertEquals(List.of("t/1"), appendedTopics(), "nothing left to be late");
    }

    @Test
    void lateMessagesOfAPublisherOnAnotherNodeHoldNoOne() {
        RecordingConnection pub = h.connect("pub", true, 0, 10);
        h.connect("sub", true, 0, 10);
        h.deliver("sub", receivedAgo("on-another-node", 5_000), 1);
        assertFalse(h.backpressure.behind());
        h.send("pub", pub, publish("t/1", 1, 1, false));
        assertEquals(List.of("t/1"), appendedTopics());
    }

    @Test
    void aSubscriberThatDoesNotAcknowledgeHoldsNoOne() {
        RecordingConnection pub = h.connect("pub", true, 0, 10);
        RecordingConnection sub = h.connect("sub", true, 0, 1); // one message in flight at a time
        h.deliver("sub", receivedAgo("pub", 0), 1);
        h.deliver("sub", receivedAgo("pub", 0), 1);
        h.deliver("sub", receivedAgo("pub", 0), 1);
        assertEquals(1, sub.written(Packet.Publish.class).size(), "two wait for the client's window");

        h.advance(5_000); // the subscriber sits on its window
        h.send("sub", sub, ack(AckType.PUBACK, sub.written(Packet.Publish.class).get(0).packetId()));
        assertEquals(2, sub.written(Packet.Publish.class).size(), "the next one goes 5 s after its receipt");
        assertFalse(h.backpressure.behind(), "time spent waiting for a client's window is the client's own");

        h.send("pub", pub, publish("t/1", 1, 1, false));
        assertEquals(List.of("t/1"), appendedTopics());
    }

    @Test
    void withoutBackpressureNothingWaits() {
        SessionHarness plain = new SessionHarness();
        RecordingConnection pub = plain.connect("pub", true, 0, 10);
        plain.connect("sub", true, 0, 10);
        plain.deliver("sub", new BrokerMessage("t/late", new byte[] {1}, 1, false, "pub", plain.now - 60_000,
                BrokerMessage.NO_EXPIRY, BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null, List.of()), 1);
        plain.send("pub", pub, publish("t/1", 1, 1, false));
        assertEquals(1, plain.publishLog.appended.size());
    }
}
