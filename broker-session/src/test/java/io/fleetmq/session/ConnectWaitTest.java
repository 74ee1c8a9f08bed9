package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ReasonCode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A CONNECT waits for the connect sequence; what the client sends meanwhile (it may, before
 * CONNACK) is handled after CONNACK, in order, and a CONNECT not decided in time gets 0x88
 * [MQTT-3.2.2-7].
 */
class ConnectWaitTest {

    private static final String CLIENT = "c";

    @Test
    void packetsSentBeforeConnackAreHandledAfterItInOrder() {
        SessionHarness h = new SessionHarness();
        h.sequence.answering = false;
        RecordingConnection c = h.connectOnly(CLIENT, true, 0, 10);
        h.actors.runAll();
        SessionActor session = h.session(CLIENT);
        session.packet(c, new Packet.Subscribe(3, 0, List.of(new Packet.TopicSubscription("a", 1, false, false, 0)),
                List.of()));
        session.packet(c, new Packet.PingReq());
        h.actors.runAll();
        assertEquals(List.of(), c.written, "nothing before CONNACK");

        answer(h);

        assertEquals(3, c.written.size());
        assertTrue(c.written.get(0) instanceof Packet.ConnAck);
        assertEquals(3, ((Packet.SubAck) c.written.get(1)).packetId());
        assertTrue(c.written.get(2) instanceof Packet.PingResp);
        assertTrue(c.allFlushed());
    }

    @Test
    void aConnectNotAnsweredInTimeGets0x88AndWhatItsClientSentMeanwhileIsDropped() {
        SessionHarness h = new SessionHarness();
        h.sequence.answering = false;
        RecordingConnection c = h.connectOnly(CLIENT, true, 0, 10);
        h.actors.runAll();
        h.session(CLIENT).packet(c, new Packet.PingReq());
        h.actors.runAll();

        h.timers.advance(h.sequence.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        h.actors.runAll();

        assertEquals(1, c.written.size());
        Packet.ConnAck refused = (Packet.ConnAck) c.written.get(0);
        assertEquals(ReasonCode.SERVER_UNAVAILABLE, refused.reasonCode());
        assertTrue(c.closed);
        assertNull(h.session(CLIENT), "a session that never had a connection here does not stay");
    }

    @Test
    void anAnswerAfterTheTimeoutIsUndoneWithADisconnectedEvent() {
        SessionHarness h = new SessionHarness();
        h.sequence.answering = false;
        RecordingConnection c = h.connectOnly(CLIENT, true, 0, 10);
        h.actors.runAll();
        h.timers.advance(h.sequence.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        h.actors.runAll();
        int before = h.sequence.events.size();

        answer(h);

        assertTrue(h.sequence.events.subList(before, h.sequence.events.size()).stream()
                .anyMatch(e -> e instanceof io.fleetmq.core.cluster.SessionEvent.Disconnected d
                        && d.sessionExpirySeconds() == io.fleetmq.core.cluster.SessionEvent.Disconnected.KEEP_EXPIRY),
                "the acceptance is undone, and the session keeps the expiry it was accepted with");
        assertEquals(1, c.written.size(), "still only the refusal");
    }

    @Test
    void aRepeatedAnswerLeavesTheConnectionItAcceptedAlone() {
        SessionHarness h = new SessionHarness();
        RecordingConnection c = h.connect(CLIENT, true, 0, 10);
        io.fleetmq.core.cluster.SessionEvent.Connect connect = h.sequence.events.stream()
                .filter(e -> e instanceof io.fleetmq.core.cluster.SessionEvent.Connect)
                .map(e -> (io.fleetmq.core.cluster.SessionEvent.Connect) e).findFirst().orElseThrow();
        int before = h.sequence.events.size();

        // The sequence read its events again (after a failed write, or as the partition's new owner).
        h.sequence.registry.command(new io.fleetmq.core.cluster.NodeCommand.ConnectAccepted(connect.requestId(),
                CLIENT, 1, false, false, false));
        h.actors.runAll();

        assertEquals(List.of(), h.sequence.events.subList(before, h.sequence.events.size()),
                "no Disconnected event for the live connection");
        assertTrue(!c.closed, "still connected");
        assertEquals(1, c.written(Packet.ConnAck.class).size());
        assertTrue(h.sequence.sessions.get(CLIENT).connected());
    }

    @Test
    void aSecondConnectionTakesTheSessionOverWith0x8e() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        RecordingConnection second = h.connect(CLIENT, false, 3600, 10);

        assertTrue(first.closed);
        Packet.Disconnect d = (Packet.Disconnect) first.written.get(first.written.size() - 1);
        assertEquals(ReasonCode.SESSION_TAKEN_OVER, d.reasonCode());
        assertTrue(second.written(Packet.ConnAck.class).get(0).sessionPresent());
    }

    @Test
    void aConnectionLostBeforeItsConnackStopsWaitingAndLeavesNeitherSessionNorWill() {
        SessionHarness h = new SessionHarness();
        h.sequence.answering = false;
        RecordingConnection c = new RecordingConnection();
        Packet.Will will = new Packet.Will("wills/c", new byte[] {1}, 0, false, 0, -1, -1, null, null, null, List.of());
        h.registry.connect(SessionHarness.connectPacket(CLIENT, true, 0, 10, will), c);
        h.actors.runAll();

        h.lose(CLIENT, c);

        assertNull(h.session(CLIENT), "nothing waits for the sequence any more");
        int before = h.sequence.events.size();
        answer(h); // the sequence had it stored, and decides it now
        assertTrue(h.sequence.events.subList(before, h.sequence.events.size()).stream()
                .anyMatch(e -> e instanceof io.fleetmq.core.cluster.SessionEvent.Disconnected),
                "the acceptance is undone at once");
        h.timers.advance(h.sequence.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        h.actors.runAll();
        assertEquals(List.of(), c.written, "no CONNACK to a connection that is gone, not even the timeout's 0x88");
        assertEquals(List.of(), h.publishLog.appended, "a connection never accepted leaves no will");
        assertTrue(h.publishLog.pending.isEmpty(), "nor one on its way");
    }

    @Test
    void aLostReconnectionLeavesTheSessionItCameForAsItWas() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 3600, 10);
        h.subscribe(CLIENT, first, "t/#", 1);
        h.lose(CLIENT, first);
        h.sequence.answering = false;
        RecordingConnection again = h.connectOnly(CLIENT, false, 3600, 10);
        h.actors.runAll();

        h.lose(CLIENT, again);

        SessionActor session = h.session(CLIENT);
        assertTrue(session != null, "the persistent session stays");
        assertEquals(List.of(), again.written);
        // It still takes what is published for it, and the next connection gets it.
        h.deliver(CLIENT, h.message("t/x", 1), 1);
        h.sequence.answering = true;
        RecordingConnection third = h.connect(CLIENT, false, 3600, 10);
        assertTrue(third.written(Packet.ConnAck.class).get(0).sessionPresent());
        assertEquals(1, third.written(Packet.Publish.class).size(), "the message kept while it was away");
    }

    /** The sequence answers the CONNECT it kept, as it would have. */
    private static void answer(SessionHarness h) {
        io.fleetmq.core.cluster.SessionEvent.Connect connect = h.sequence.events.stream()
                .filter(e -> e instanceof io.fleetmq.core.cluster.SessionEvent.Connect)
                .map(e -> (io.fleetmq.core.cluster.SessionEvent.Connect) e).reduce((a, b) -> b).orElseThrow();
        h.sequence.answering = true;
        h.sequence.event(connect);
        h.actors.runAll();
    }
}
