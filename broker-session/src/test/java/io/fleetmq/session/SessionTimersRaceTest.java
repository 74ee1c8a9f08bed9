package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ReasonCode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A reconnect cancels the session's expiry and a delayed will [MQTT-3.1.3-9], also when their timer
 * has already fired and its task waits in the mailbox behind the reconnect.
 */
class SessionTimersRaceTest {

    private static final String CLIENT = "c";

    @Test
    void anExpiryThatFiredWhileTheReconnectWaitedDoesNotEndTheResumedSession() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 10, 10);
        h.subscribe(CLIENT, first, "t/#", 1);
        h.lose(CLIENT, first);

        // The client is back and leaves again at once, asking for an hour this time.
        RecordingConnection second = h.connectOnly(CLIENT, false, 3600, 10);
        h.session(CLIENT).packet(second, new Packet.Disconnect(ReasonCode.SUCCESS, 3600, null, null));
        h.actors.runNext(); // the CONNECT goes to the connect sequence
        h.actors.runNext(); // whose answer waits in the session's mailbox
        h.timers.advance(10, TimeUnit.SECONDS); // the old expiry fires behind it
        h.actors.runAll();

        assertTrue(second.written(Packet.ConnAck.class).get(0).sessionPresent());
        assertTrue(h.sequence.events.stream().noneMatch(e -> e instanceof SessionEvent.Expired),
                "the session was resumed before it expired");
        assertNotNull(h.session(CLIENT), "the session lives on, for an hour");
        assertEquals(1, h.subscriptions.subscriptionsOf(CLIENT).size(), "with its subscription");
    }

    @Test
    void anExpiryThatFiresWhileTheReconnectWaitsForTheConnectSequenceLeavesTheSessionToIt() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 10, 10);
        h.subscribe(CLIENT, first, "t/#", 1);
        h.deliver(CLIENT, h.message("t/0", 1), 1);
        h.lose(CLIENT, first);

        RecordingConnection second = h.connectOnly(CLIENT, false, 3600, 10);
        h.actors.runNext(); // the CONNECT goes to the connect sequence, whose answer is on its way
        h.timers.advance(10, TimeUnit.SECONDS); // the expiry fires before the answer is handled
        h.actors.runAll();

        assertTrue(second.written(Packet.ConnAck.class).get(0).sessionPresent());
        assertTrue(h.sequence.events.stream().noneMatch(e -> e instanceof SessionEvent.Expired));
        assertEquals(List.of("t/0"), second.publishedTopics(), "the message in flight is resent");
        assertEquals(1, h.subscriptions.subscriptionsOf(CLIENT).size());
    }

    @Test
    void anExpiryThatFiresWhileTheReconnectWaitsEndsTheSessionWhenTheConnectIsRefused() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = h.connect(CLIENT, true, 10, 10);
        h.subscribe(CLIENT, first, "t/#", 1);
        h.lose(CLIENT, first);
        h.sequence.answering = false;

        RecordingConnection second = h.connectOnly(CLIENT, false, 3600, 10);
        h.actors.runAll();
        h.timers.advance(10, TimeUnit.SECONDS);
        h.actors.runAll();
        assertTrue(h.sequence.events.stream().noneMatch(e -> e instanceof SessionEvent.Expired), "not while it waits");
        h.timers.advance(h.sequence.connectTimeout().toSeconds(), TimeUnit.SECONDS); // 0x88
        h.actors.runAll();

        assertEquals(ReasonCode.SERVER_UNAVAILABLE, second.written(Packet.ConnAck.class).get(0).reasonCode());
        assertTrue(h.sequence.events.stream().anyMatch(e -> e instanceof SessionEvent.Expired));
        assertEquals(0, h.subscriptions.subscriptionsOf(CLIENT).size(), "the session ended");
        assertEquals(null, h.session(CLIENT));
    }

    @Test
    void aDelayedWillThatFiredWhileTheReconnectWaitedDoesNotPublishTheNextConnectionsWillEarly() {
        SessionHarness h = new SessionHarness();
        RecordingConnection first = new RecordingConnection();
        h.registry.connect(SessionHarness.connectPacket(CLIENT, true, 3600, 10, will("will/1", 5)), first);
        h.actors.runAll();
        h.lose(CLIENT, first);

        // Back, with a will of an hour's delay, and gone again at once asking for that will.
        RecordingConnection second = new RecordingConnection();
        h.registry.connect(SessionHarness.connectPacket(CLIENT, false, 3600, 10, will("will/2", 3600)), second);
        h.session(CLIENT).packet(second, new Packet.Disconnect(ReasonCode.DISCONNECT_WITH_WILL, -1, null, null));
        h.actors.runNext(); // the CONNECT goes to the connect sequence
        h.actors.runNext(); // whose answer waits in the session's mailbox
        h.timers.advance(5, TimeUnit.SECONDS); // the first will's delay ends behind it
        h.actors.runAll();

        assertTrue(second.written(Packet.ConnAck.class).get(0).sessionPresent());
        assertEquals(List.of(), h.publishLog.appended, "the reconnect cancelled the first will; the second waits an hour");
        h.timers.advance(3600, TimeUnit.SECONDS);
        h.actors.runAll();
        assertEquals(List.of("will/2"), h.publishLog.appended.stream().map(m -> m.topic()).toList());
    }

    private static Packet.Will will(String topic, long delaySeconds) {
        return new Packet.Will(topic, new byte[] {1}, 0, false, delaySeconds, -1, -1, null, null, null, List.of());
    }
}
