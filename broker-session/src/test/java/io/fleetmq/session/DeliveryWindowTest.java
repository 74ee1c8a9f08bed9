package io.fleetmq.session;

import static io.fleetmq.session.SessionHarness.ack;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.Packet.AckType;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The client's Receive Maximum bounds the QoS 1/2 PUBLISH packets it has unacknowledged, whatever
 * they come from: the session's memory or its DEVICE queue [MQTT-3.3.4-7].
 */
class DeliveryWindowTest {

    private static final String CLIENT = "d";
    private static final int RECEIVE_MAXIMUM = 2;

    @Test
    void aDeviceQueueReadAndRetainedMessagesTogetherStayWithinReceiveMaximum() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        h.deviceQueues.holdReads = true;
        RecordingConnection c = h.connect(CLIENT, true, 3600, RECEIVE_MAXIMUM);
        for (int i = 0; i < RECEIVE_MAXIMUM; i++) {
            h.deviceQueues.append(CLIENT, new Downlink(0, i, h.message("t/q" + i, 1),
                    List.of(SessionHarness.subscription(CLIENT, 1))));
        }
        // Redis reads the queue, sized for the whole window; meanwhile retained messages are due.
        for (int i = 0; i < RECEIVE_MAXIMUM; i++) {
            h.retained.put("t/r" + i, h.message("t/r" + i, 1));
        }
        h.subscribe(CLIENT, c, "t/#", 1);

        h.deviceQueues.answerReads();
        h.actors.runAll();

        assertTrue(unacknowledged(c) <= RECEIVE_MAXIMUM, "unacknowledged: " + unacknowledged(c) + " of "
                + c.publishedTopics());
        // Nothing is lost: acknowledging everything sent brings the rest.
        Set<String> received = new HashSet<>();
        for (int round = 0; round < 10 && received.size() < 2 * RECEIVE_MAXIMUM; round++) {
            for (Packet.Publish p : c.written(Packet.Publish.class)) {
                if (received.add(p.topic())) {
                    h.send(CLIENT, c, ack(AckType.PUBACK, p.packetId()));
                    h.deviceQueues.answerReads();
                    h.actors.runAll();
                    assertTrue(unacknowledged(c) <= RECEIVE_MAXIMUM);
                }
            }
        }
        assertEquals(Set.of("t/q0", "t/q1", "t/r0", "t/r1"), received);
        assertEquals(0, h.droppedTotal());
    }

    @Test
    void anEntryQueuedWhileAReadIsOnItsWayIsSentWithoutWaitingForTheNextMessage() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection c = h.connect(CLIENT, false, 3600, RECEIVE_MAXIMUM);
        h.subscribe(CLIENT, c, "t/#", 1);
        h.lose(CLIENT, c);
        h.deviceQueues.holdReads = true;
        h.deviceQueues.readAsAsked = true;
        c = h.connect(CLIENT, false, 3600, RECEIVE_MAXIMUM); // reads its queue (empty when Redis runs the read)

        h.queue(CLIENT, h.message("t/late", 1), 1); // stored, and the session told, before the read's answer arrives
        h.deviceQueues.answerReads();
        h.actors.runAll();
        h.deviceQueues.answerReads(); // the read the notification asked for
        h.actors.runAll();

        assertEquals(List.of("t/late"), c.publishedTopics(), "the last message of a burst does not wait for another");
    }

    @Test
    void aConnectionRegistersAsItsQueuesReaderWithItsFirstReadAndReleasesItWhenItEnds() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection c = h.connect(CLIENT, false, 3600, RECEIVE_MAXIMUM);
        String first = h.deviceQueues.readers.get(CLIENT);
        assertEquals(SessionHarness.NODE, QueueReaderTag.nodeOf(first).getKey(), "registered by the first read: " + first);
        h.lose(CLIENT, c);
        assertEquals(null, h.deviceQueues.readers.get(CLIENT), "released when the connection ended");

        h.connect(CLIENT, false, 3600, RECEIVE_MAXIMUM);
        String second = h.deviceQueues.readers.get(CLIENT);
        assertTrue(second != null && !second.equals(first), "the next connection registers as itself: " + second);
    }

    @Test
    void aNoticeWithoutASequenceNumberMakesTheSessionReadItsQueue() {
        SessionHarness h = new SessionHarness(MqttLimits.defaults(), true);
        RecordingConnection c = h.connect(CLIENT, false, 3600, RECEIVE_MAXIMUM);
        h.subscribe(CLIENT, c, "t/#", 1);
        // Stored by a writer whose notice was lost; it stores the batch again, finds it there, and
        // can only say that something waits.
        Downlink d = new Downlink(0, 0, h.message("t/again", 1), List.of(SessionHarness.subscription(CLIENT, 1)));
        h.deviceQueues.append(CLIENT, d);
        h.actors.runAll();
        assertEquals(List.of(), c.publishedTopics());

        h.registry.command(new io.fleetmq.core.cluster.NodeCommand.Queued(CLIENT, 0, d));
        h.actors.runAll();
        assertEquals(List.of("t/again"), c.publishedTopics());
    }

    /** PUBLISH packets written minus the acknowledgements the test sent for them. */
    private static int unacknowledged(RecordingConnection c) {
        Set<Integer> open = new HashSet<>();
        for (Packet.Publish p : c.written(Packet.Publish.class)) {
            open.add(p.packetId());
        }
        open.removeAll(c.acknowledged);
        return open.size();
    }
}
