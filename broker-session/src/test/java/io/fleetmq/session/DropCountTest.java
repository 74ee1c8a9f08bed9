package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.kafka.app.AppBacklog;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every message a session lets go of undelivered is counted once, by whoever held it; one that a
 * store still holds for the session's next reader is not counted as dropped.
 */
class DropCountTest {

    private static final String CLIENT = "c";

    @Test
    void deviceQueueEntriesInFlightWhenTheSessionExpiresAreCountedOnce() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection c = h.connect(CLIENT, true, 10, 10);
        h.queue(CLIENT, h.message("t/0", 1), 1);
        h.queue(CLIENT, h.message("t/1", 1), 1);
        assertEquals(2, c.written(Packet.Publish.class).size());
        h.lose(CLIENT, c);

        h.timers.advance(10, TimeUnit.SECONDS);
        h.actors.runAll();

        assertEquals(2, h.dropped("session_ended"));
    }

    @Test
    void deviceQueueEntriesInFlightWhenAReconnectStartsANewSessionAreCountedOnce() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection c = h.connect(CLIENT, true, 3600, 10);
        h.queue(CLIENT, h.message("t/0", 1), 1);
        h.lose(CLIENT, c);

        h.connect(CLIENT, true, 3600, 10); // clean start: the old session ends

        assertEquals(1, h.dropped("session_ended"));
    }

    @Test
    void backlogRecordsInFlightAtATakeOverAreNotDroppedTheBacklogDeliversThemAgain() {
        InMemoryAppBacklogs backlogs = new InMemoryAppBacklogs();
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), false, backlogs, "app-.*");
        String client = "app-1";
        RecordingConnection c = h.connect(client, true, 3600, 10);
        backlogs.hand(client, new AppBacklog.Record(0, 0, ClusterCodec.encode(new Downlink(0, 0, h.message("t/0", 1),
                List.of(SessionHarness.subscription(client, 1)))), false));
        h.actors.runAll();
        assertEquals(1, c.written(Packet.Publish.class).size());
        h.deliver(client, h.message("t/mem", 1), 1); // in memory: sent too
        h.lose(client, c);
        h.deliver(client, h.message("t/queued", 1), 1); // in memory: waits for the client

        h.registry.command(new NodeCommand.TakeOver(client, 99));
        h.actors.runAll();

        assertEquals(2, h.dropped("session_moved"), "the in-memory ones, not the backlog record");
        assertEquals(-1, backlogs.committed(client), "the record is not committed: the backlog delivers it again");
    }
}
