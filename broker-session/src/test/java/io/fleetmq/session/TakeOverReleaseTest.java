package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ReasonCode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The node told to give a connection up to another node ({@link NodeCommand.TakeOver}) answers with
 * {@link SessionEvent.Released} after everything it wrote about the session before, whether it still
 * held the connection or a DISCONNECT had ended it: the connect sequence decides the waiting CONNECT
 * on that word (see {@code ConnectSequencerTest}).
 */
class TakeOverReleaseTest {

    @Test
    void aSessionEndedByDisconnectAnswersAfterItsDisconnectedEvent() {
        SessionHarness h = new SessionHarness();
        RecordingConnection c = h.connect("e", false, 0, 10);
        h.send("e", c, Packet.Disconnect.of(ReasonCode.SUCCESS, null));
        assertTrue(c.closed);

        h.registry.command(new NodeCommand.TakeOver("e", 2));
        h.actors.runAll();

        assertEquals(List.of("Disconnected e@1 expiry 0", "Released e@2"), lastEvents(h, 2));
    }

    @Test
    void aLiveConnectionIsClosedWith0x8eAndThenReleased() {
        SessionHarness h = new SessionHarness();
        RecordingConnection c = h.connect("f", false, 60, 10);

        h.registry.command(new NodeCommand.TakeOver("f", 2));
        h.actors.runAll();

        assertTrue(c.closed);
        assertEquals(ReasonCode.SESSION_TAKEN_OVER, c.written(Packet.Disconnect.class).get(0).reasonCode());
        assertEquals(List.of("Connect f", "Released f@2"), lastEvents(h, 2),
                "no Disconnected: the session lives on with the new connection");
    }

    @Test
    void aSessionOfferedAgainAfterItWasTakenOverStillAnswers() {
        SessionHarness h = new SessionHarness();
        RecordingConnection c = h.connect("g", false, 60, 10);
        h.registry.command(new NodeCommand.TakeOver("g", 2));
        h.actors.runAll();

        h.registry.command(new NodeCommand.TakeOver("g", 2)); // the same command read again
        h.actors.runAll();

        assertTrue(c.closed);
        assertEquals(List.of("Released g@2", "Released g@2"), lastEvents(h, 2));
    }

    @Test
    void aSessionThatEndedAfterTheRegistryFoundItStillAnswers() {
        SessionHarness h = new SessionHarness();
        RecordingConnection c = h.connect("h", false, 0, 10);
        SessionActor found = h.session("h");
        h.send("h", c, Packet.Disconnect.of(ReasonCode.SUCCESS, null)); // ends it: its mailbox closes

        found.takenOver(new NodeCommand.TakeOver("h", 2));
        h.actors.runAll();

        assertEquals(List.of("Disconnected h@1 expiry 0", "Released h@2"), lastEvents(h, 2));
    }

    private static List<String> lastEvents(SessionHarness h, int n) {
        List<String> all = h.sequence.events.stream().map(TakeOverReleaseTest::describe).toList();
        return all.subList(Math.max(0, all.size() - n), all.size());
    }

    private static String describe(SessionEvent e) {
        if (e instanceof SessionEvent.Disconnected d) {
            return "Disconnected " + d.clientId() + "@" + d.epoch() + " expiry " + d.sessionExpirySeconds();
        } else if (e instanceof SessionEvent.Released r) {
            return "Released " + r.clientId() + "@" + r.epoch();
        } else if (e instanceof SessionEvent.Connect c) {
            return "Connect " + c.clientId();
        }
        return e.getClass().getSimpleName();
    }
}
