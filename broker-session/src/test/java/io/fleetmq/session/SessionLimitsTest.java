package io.fleetmq.session;

import static io.fleetmq.session.SessionHarness.ack;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.Packet.AckType;
import io.fleetmq.core.mqtt.ReasonCode;
import io.micrometer.core.instrument.Counter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What one session may take: messages in flight, subscriptions, and the socket's write buffer. */
class SessionLimitsTest {

    private static final String CLIENT = "c";

    private static MqttLimits limits(int maxInflight, int maxSubscriptions) {
        MqttLimits d = MqttLimits.defaults();
        return new MqttLimits(d.receiveMaximum(), d.maximumPacketSize(), d.topicAliasMaximum(), d.maxKeepAliveSeconds(),
                d.maxSessionExpirySeconds(), d.maxQueuedMessages(), d.maxQueuedQos0(), d.maxOutboundAliases(),
                maxInflight, maxSubscriptions);
    }

    private static double exceeded(SessionHarness h, String limit) {
        Counter c = h.meters.find(LimitsExceeded.METER).tag("limit", limit).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void aClientWithoutReceiveMaximumGetsNoMoreInFlightThanTheNodeAllows() {
        SessionHarness h = new SessionHarness(limits(3, 1000), false);
        RecordingConnection c = h.connect(CLIENT, true, 0, 0); // no Receive Maximum: 65,535 allowed
        h.subscribe(CLIENT, c, "t/#", 1);
        for (int i = 0; i < 10; i++) {
            h.deliver(CLIENT, h.message("t/" + i, 1), 1);
        }
        List<Packet.Publish> sent = c.written(Packet.Publish.class);
        assertEquals(3, sent.size(), "max-inflight-messages");
        h.send(CLIENT, c, ack(AckType.PUBACK, sent.get(0).packetId()));
        assertEquals(4, c.written(Packet.Publish.class).size(), "an acknowledgement makes room for one more");
        assertEquals(0, h.droppedTotal(), "the rest wait in the session");
    }

    @Test
    void subscriptionsBeyondTheBoundAreRefusedWithQuotaExceededAndReplacingOneStillWorks() {
        SessionHarness h = new SessionHarness(limits(1024, 2), false);
        RecordingConnection c = h.connect(CLIENT, true, 0, 10);
        h.send(CLIENT, c, new Packet.Subscribe(1, 0, List.of(
                new Packet.TopicSubscription("a", 1, false, false, 0),
                new Packet.TopicSubscription("b", 1, false, false, 0),
                new Packet.TopicSubscription("c", 1, false, false, 0)), List.of()));
        assertEquals(List.of(ReasonCode.GRANTED_QOS_1, ReasonCode.GRANTED_QOS_1, ReasonCode.QUOTA_EXCEEDED),
                c.written(Packet.SubAck.class).get(0).reasonCodes());
        h.send(CLIENT, c, new Packet.Subscribe(2, 0, List.of(new Packet.TopicSubscription("a", 2, false, false, 0)),
                List.of()));
        assertEquals(List.of(ReasonCode.GRANTED_QOS_2), c.written(Packet.SubAck.class).get(1).reasonCodes(),
                "a subscription replaced, not added");
        assertEquals(1, exceeded(h, LimitsExceeded.SUBSCRIPTIONS));
    }

    @Test
    void qos1DeliveriesWaitInTheSessionWhileTheSocketIsFullAndGoOutWhenItDrains() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), false);
        RecordingConnection c = h.connect(CLIENT, true, 0, 100);
        h.subscribe(CLIENT, c, "t/#", 1);
        c.writable = false;
        for (int i = 0; i < 5; i++) {
            h.deliver(CLIENT, h.message("t/" + i, 1), 1);
        }
        assertEquals(0, c.written(Packet.Publish.class).size(), "nothing written to a full socket");
        c.writable = true;
        h.session(CLIENT).writable(c);
        h.actors.runAll();
        assertEquals(List.of("t/0", "t/1", "t/2", "t/3", "t/4"), c.publishedTopics(), "in order once it drains");
        assertEquals(0, h.droppedTotal());
    }
}
