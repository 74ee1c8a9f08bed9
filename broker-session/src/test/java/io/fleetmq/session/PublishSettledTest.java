package io.fleetmq.session;

import static io.fleetmq.session.SessionHarness.ack;
import static io.fleetmq.session.SessionHarness.publish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.Packet.AckType;
import io.fleetmq.core.mqtt.ReasonCode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The transport counts a connection's unsettled PUBLISH packets to stop reading a fast publisher;
 * the session settles each PUBLISH exactly once, whatever becomes of it.
 */
class PublishSettledTest {

    private static final String CLIENT = "p";

    private final SessionHarness h = new SessionHarness();

    @Test
    void storedPublishesAreSettledOnceWhenKafkaAnswers() {
        RecordingConnection c = h.connect(CLIENT, true, 0, 10);
        h.send(CLIENT, c, publish("a", 0, 0, false));
        h.send(CLIENT, c, publish("a", 1, 1, false));
        h.send(CLIENT, c, publish("a", 2, 2, false));
        assertEquals(0, c.settled, "not before Kafka answers");

        h.publishLog.storeAll();
        h.actors.runAll();

        assertEquals(3, c.settled);
        assertEquals(List.of(AckType.PUBACK, AckType.PUBREC), c.written(Packet.Ack.class).stream()
                .map(Packet.Ack::type).toList());
    }

    @Test
    void aPublishKafkaRefusesIsSettledOnceAndAnsweredWithAnError() {
        RecordingConnection c = h.connect(CLIENT, true, 0, 10);
        h.send(CLIENT, c, publish("a", 1, 1, false));
        h.publishLog.failAll();
        h.actors.runAll();

        assertEquals(1, c.settled);
        assertEquals(ReasonCode.UNSPECIFIED_ERROR, c.written(Packet.Ack.class).get(0).reasonCode());
        assertEquals(1, h.dropped("publish_not_stored"));
    }

    @Test
    void aQos2ResendAndAnInvalidPayloadAreSettledAtOnce() {
        RecordingConnection c = h.connect(CLIENT, true, 0, 10);
        h.send(CLIENT, c, publish("a", 2, 5, false));
        h.publishLog.storeAll();
        h.actors.runAll();
        h.send(CLIENT, c, publish("a", 2, 5, true));
        assertEquals(2, c.settled, "the resend is not stored again and settled at once");

        h.send(CLIENT, c, new Packet.Publish("a", 0, new byte[] {(byte) 0xFF}, 1, false, false, 6, -1, 1, null, null,
                null, List.of(), List.of()));
        assertEquals(3, c.settled);
        assertEquals(ReasonCode.PAYLOAD_FORMAT_INVALID, c.written(Packet.Ack.class).get(2).reasonCode());
    }

    @Test
    void aPublishThatBreaksTheProtocolIsSettledOnce() {
        RecordingConnection c = h.connect(CLIENT, true, 0, 10);
        h.send(CLIENT, c, publish("a/+", 1, 1, false));

        assertEquals(1, c.settled);
        assertTrue(c.closed);
        Packet.Disconnect d = (Packet.Disconnect) c.written.get(c.written.size() - 1);
        assertEquals(ReasonCode.TOPIC_NAME_INVALID, d.reasonCode());
    }

    @Test
    void aPublishStillWithKafkaWhenItsClientLeftIsSettledOnceWhenKafkaAnswers() {
        RecordingConnection c = h.connect(CLIENT, true, 3600, 10);
        h.send(CLIENT, c, publish("a", 1, 1, false));
        h.lose(CLIENT, c);
        RecordingConnection again = h.connect(CLIENT, false, 3600, 10);

        h.publishLog.storeAll();
        h.actors.runAll();

        assertEquals(1, c.settled);
        assertEquals(0, again.settled);
        assertEquals(List.of(), again.written(Packet.Ack.class), "the old connection's PUBACK is not sent on the new one");
        assertEquals(List.of(), c.written(Packet.Ack.class));
    }

    @Test
    void publishesSentBeforeConnackAreSettledOnce() {
        h.sequence.answering = false;
        RecordingConnection c = h.connectOnly(CLIENT, true, 0, 10);
        h.actors.runAll();
        h.session(CLIENT).packet(c, publish("a", 1, 1, false));
        h.actors.runAll();
        h.sequence.answering = true;
        h.sequence.event(h.sequence.events.get(0));
        h.actors.runAll();
        h.publishLog.storeAll();
        h.actors.runAll();

        assertEquals(1, c.settled);
        assertEquals(new Packet.Ack(AckType.PUBACK, 1, ReasonCode.SUCCESS, null), c.written.get(1));
    }

    @Test
    void aPublishOverOurReceiveMaximumIsSettledOnceAndEndsTheConnectionWith0x93() {
        SessionHarness small = new SessionHarness(new MqttLimits(1, 1_048_576, 64, 0, 0xFFFF_FFFFL, 10_000, 1_000, 64),
                false);
        RecordingConnection c = small.connect(CLIENT, true, 0, 10);
        small.send(CLIENT, c, publish("a", 1, 1, false));
        small.send(CLIENT, c, publish("a", 1, 2, false));

        assertEquals(1, c.settled, "the refused one; the first still waits for Kafka");
        Packet.Disconnect d = (Packet.Disconnect) c.written.get(c.written.size() - 1);
        assertEquals(ReasonCode.RECEIVE_MAXIMUM_EXCEEDED, d.reasonCode());
        small.publishLog.storeAll();
        small.actors.runAll();
        // The session ended with its connection (expiry 0) and its mailbox is closed; Kafka's answer
        // still settles the first.
        assertEquals(2, c.settled, "each PUBLISH settled once");
        assertEquals(List.of(), c.written(Packet.Ack.class), "nothing after the DISCONNECT");
        assertTrue(c.closed);
    }
}
