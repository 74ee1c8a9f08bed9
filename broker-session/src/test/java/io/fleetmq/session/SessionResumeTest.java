package io.fleetmq.session;

import static io.fleetmq.session.SessionHarness.ack;
import static io.fleetmq.session.SessionHarness.publish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.Packet.AckType;
import io.fleetmq.core.mqtt.ReasonCode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a session keeps for its client between connections and sends again on resume
 * [MQTT-4.4.0-1]: QoS 1/2 messages in flight in memory or in its DEVICE queue, and the state of
 * inbound QoS 2 flows [MQTT-4.3.3-10].
 */
class SessionResumeTest {

    private static final String CLIENT = "c";

    @Test
    void inFlightMessagesInMemoryAreResentFirstWithTheirIdentifiersAndDupThenTheQueuedOnes() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 3600, 2);
        for (int i = 0; i < 4; i++) {
            h.deliver(CLIENT, h.message("t/" + i, 1), 1);
        }
        List<Packet.Publish> sent = first.written(Packet.Publish.class);
        assertEquals(List.of("t/0", "t/1"), sent.stream().map(Packet.Publish::topic).toList(), "Receive Maximum 2");
        h.send(CLIENT, first, ack(AckType.PUBACK, sent.get(0).packetId()));
        assertEquals(List.of("t/0", "t/1", "t/2"), first.publishedTopics(), "the acknowledgement made room");
        int unacknowledged = sent.get(1).packetId();
        h.lose(CLIENT, first);
        h.deliver(CLIENT, h.message("t/4", 1), 1);

        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);

        Packet.ConnAck connAck = second.written(Packet.ConnAck.class).get(0);
        assertTrue(connAck.sessionPresent());
        List<Packet.Publish> resent = second.written(Packet.Publish.class);
        assertEquals(List.of("t/1", "t/2", "t/3", "t/4"), resent.stream().map(Packet.Publish::topic).toList());
        assertEquals(unacknowledged, resent.get(0).packetId(), "the same packet identifier");
        assertTrue(resent.get(0).dup(), "DUP on the resend");
        assertTrue(resent.get(1).dup());
        assertFalse(resent.get(2).dup(), "sent for the first time: no DUP");
        assertFalse(resent.get(3).dup(), "queued while offline, sent for the first time: no DUP");
        assertEquals(0, h.droppedTotal());
    }

    @Test
    void aQos2MessageWhosePubrecCameIsResumedWithPubrel() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        h.deliver(CLIENT, h.message("t/0", 2), 2);
        int id = first.written(Packet.Publish.class).get(0).packetId();
        h.send(CLIENT, first, ack(AckType.PUBREC, id));
        assertEquals(new Packet.Ack(AckType.PUBREL, id, ReasonCode.SUCCESS, null), last(first));
        h.lose(CLIENT, first);

        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);

        assertEquals(List.of(), second.written(Packet.Publish.class));
        assertEquals(new Packet.Ack(AckType.PUBREL, id, ReasonCode.SUCCESS, null), last(second));
        h.send(CLIENT, second, ack(AckType.PUBCOMP, id));
        h.deliver(CLIENT, h.message("t/1", 2), 2);
        assertEquals(1, second.written(Packet.Publish.class).size(), "the window is free again");
    }

    @Test
    void deviceQueueEntriesAreResumedWithTheIdentifierTheyWereSentWith() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        long seq = h.queue(CLIENT, h.message("t/0", 1), 1);
        Packet.Publish sent = first.written(Packet.Publish.class).get(0);
        assertEquals(0, h.deviceQueues.entries(CLIENT).get(0).packetId(),
                "a QoS 1 identifier waits a moment: an acknowledgement would make its write moot");
        h.timers.advance(DeviceQueueReader.PACKET_ID_DELAY_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        h.actors.runAll();
        assertEquals(sent.packetId(), h.deviceQueues.entries(CLIENT).get(0).packetId(), "remembered in the queue");
        h.lose(CLIENT, first);

        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);

        Packet.Publish resent = second.written(Packet.Publish.class).get(0);
        assertEquals("t/0", resent.topic());
        assertEquals(sent.packetId(), resent.packetId());
        assertTrue(resent.dup());
        h.send(CLIENT, second, ack(AckType.PUBACK, resent.packetId()));
        assertTrue(h.deviceQueues.entries(CLIENT).stream().noneMatch(e -> e.seq() == seq), "delivered: removed");
    }

    @Test
    void aQos1EntryAcknowledgedAtOnceNeverHasItsIdentifierWrittenAndOneLeftWhenTheConnectionEndsHas() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        long acknowledged = h.queue(CLIENT, h.message("t/0", 1), 1);
        long open = h.queue(CLIENT, h.message("t/1", 1), 1);
        List<Packet.Publish> sent = first.written(Packet.Publish.class);
        h.send(CLIENT, first, ack(AckType.PUBACK, sent.get(0).packetId()));
        assertEquals(List.of(), h.deviceQueues.identifiersWritten, "nothing written within the delay");

        h.lose(CLIENT, first); // before the delay is over: the connection's end writes what waits
        assertEquals(List.of(open + "=" + sent.get(1).packetId()), h.deviceQueues.identifiersWritten,
                "only the unacknowledged entry's identifier, once");
        h.timers.advance(DeviceQueueReader.PACKET_ID_DELAY_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        h.actors.runAll();
        assertEquals(1, h.deviceQueues.identifiersWritten.size(), "not written again when the delay is over");
        assertTrue(h.deviceQueues.entries(CLIENT).stream().noneMatch(e -> e.seq() == acknowledged));

        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);
        Packet.Publish resent = second.written(Packet.Publish.class).get(0);
        assertEquals("t/1", resent.topic());
        assertEquals(sent.get(1).packetId(), resent.packetId(), "resent under its identifier [MQTT-4.4.0-1]");
        assertTrue(resent.dup());
    }

    @Test
    void aDeviceQueueReadStillUnderWayWhenTheClientReconnectsDoesNotHoldUpTheNewConnection() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        h.deviceQueues.holdReads = true;
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10); // its read waits for Redis
        h.deviceQueues.append(CLIENT, new io.fleetmq.core.cluster.Downlink(0, 0, h.message("t/q", 1),
                List.of(SessionHarness.subscription(CLIENT, 1))));
        h.lose(CLIENT, first);
        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);

        h.deviceQueues.answerReads(); // the first connection's read answers
        h.actors.runAll();
        h.deviceQueues.answerReads(); // and the second's
        h.actors.runAll();

        assertEquals(List.of("t/q"), second.publishedTopics());
    }

    @Test
    void aStoredPacketIdentifierThatIsTakenMeansANewIdentifierWithoutDup() {
        // A retained message, in flight in memory, holds identifier 1; an entry of the DEVICE queue
        // was sent with identifier 1 too (by another node the session was on).
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        h.retained.put("t/r", h.message("t/r", 1));
        h.subscribe(CLIENT, first, "t/#", 1);
        assertEquals(1, first.written(Packet.Publish.class).get(0).packetId());
        long seq = h.deviceQueues.append(CLIENT, new io.fleetmq.core.cluster.Downlink(0, 0, h.message("t/q", 1),
                List.of(SessionHarness.subscription(CLIENT, 1))));
        h.deviceQueues.sentWith(CLIENT, seq, 1);
        h.lose(CLIENT, first);

        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);

        List<Packet.Publish> sent = second.written(Packet.Publish.class);
        assertEquals(List.of("t/r", "t/q"), sent.stream().map(Packet.Publish::topic).toList());
        assertEquals(1, sent.get(0).packetId());
        assertTrue(sent.get(0).dup());
        assertEquals(2, sent.get(1).packetId(), "identifier 1 is in use: a new one");
        assertFalse(sent.get(1).dup(), "sent with this identifier for the first time");
        h.timers.advance(DeviceQueueReader.PACKET_ID_DELAY_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        h.actors.runAll();
        assertEquals(2, h.deviceQueues.entries(CLIENT).get(0).packetId(), "the new identifier is remembered");
    }

    @Test
    void aQos2EntryAwaitingPubcompWhoseIdentifierIsTakenWaitsInTheQueue() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        h.retained.put("t/r", h.message("t/r", 1));
        h.subscribe(CLIENT, first, "t/#", 1);
        long seq = h.deviceQueues.append(CLIENT, new io.fleetmq.core.cluster.Downlink(0, 0, h.message("t/q", 2),
                List.of(SessionHarness.subscription(CLIENT, 2))));
        h.deviceQueues.sentWith(CLIENT, seq, -1); // PUBREC came, PUBREL went out with identifier 1
        h.lose(CLIENT, first);

        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);

        assertEquals(List.of("t/r"), second.publishedTopics());
        assertTrue(second.written(Packet.Ack.class).stream().noneMatch(a -> a.type() == AckType.PUBREL),
                "no PUBREL for an identifier another flow uses");
        assertEquals(1, h.deviceQueues.entries(CLIENT).size(), "the entry stays for the next connection");
    }

    @Test
    void aReconnectInTheMiddleOfAnInboundQos2FlowNeverStoresTheMessageTwice() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        h.send(CLIENT, first, publish("in/1", 2, 7, false));
        h.publishLog.storeAll();
        h.actors.runAll();
        assertEquals(new Packet.Ack(AckType.PUBREC, 7, ReasonCode.SUCCESS, null), last(first));
        h.lose(CLIENT, first);

        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);
        h.send(CLIENT, second, publish("in/1", 2, 7, true));
        assertEquals(new Packet.Ack(AckType.PUBREC, 7, ReasonCode.SUCCESS, null), last(second), "acknowledged again");
        h.send(CLIENT, second, ack(AckType.PUBREL, 7));

        assertEquals(new Packet.Ack(AckType.PUBCOMP, 7, ReasonCode.SUCCESS, null), last(second));
        assertEquals(1, h.publishLog.appended.size(), "stored once");
        h.send(CLIENT, second, publish("in/2", 2, 7, false));
        assertEquals(2, h.publishLog.appended.size(), "after PUBCOMP the identifier is a new message");
    }

    @Test
    void aQos2MessageNotYetStoredWhenTheClientLeftIsNotStoredAgainOnItsResend() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        h.send(CLIENT, first, publish("in/1", 2, 7, false));
        h.lose(CLIENT, first);
        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);
        h.send(CLIENT, second, publish("in/1", 2, 7, true));
        assertEquals(List.of(), second.written(Packet.Ack.class), "no PUBREC before it is stored");

        h.publishLog.storeAll();
        h.actors.runAll();

        assertEquals(1, h.publishLog.appended.size(), "stored once");
        h.send(CLIENT, second, ack(AckType.PUBREL, 7));
        assertEquals(new Packet.Ack(AckType.PUBCOMP, 7, ReasonCode.SUCCESS, null), last(second));
    }

    private static Packet last(RecordingConnection c) {
        return c.written.get(c.written.size() - 1);
    }
}
