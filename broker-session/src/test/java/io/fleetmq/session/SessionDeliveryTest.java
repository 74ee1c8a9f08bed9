package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.retained.RetainedIndex;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How a connected session writes what the router hands it: in bulk per mailbox turn, flushed once
 * per turn, in order, and with QoS 0 held (bounded) while the socket is full.
 */
class SessionDeliveryTest {

    private static final String CLIENT = "sub";

    private final ManualExecutor actors = new ManualExecutor();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final MqttLimits limits = MqttLimits.defaults();
    private ScheduledExecutorService timers;
    private RecordingConnection connection;
    private SessionActor session;
    private Subscription subscription;

    @BeforeEach
    void connectAndSubscribe() {
        timers = Executors.newSingleThreadScheduledExecutor();
        InMemoryConnectSequence sequence = new InMemoryConnectSequence(actors);
        SessionServices services = new SessionServices("node-1", limits, (PublishPort) null, null,
                new SubscriptionTrie(), new RetainedIndex<>(), actors, timers, meters, new MessageDrops(meters),
                () -> 1_000L, sequence, null, new io.fleetmq.session.cluster.ClientTypes(null), null, null);
        SessionRegistry registry = new SessionRegistry(services);
        sequence.registry = registry;
        connection = new RecordingConnection();
        session = registry.connect(new Packet.Connect(ProtocolVersion.V5, CLIENT, true, 60, null, null, null, 0, 0, 0,
                0, false, true, null, List.of()), connection);
        session.packet(connection, new Packet.Subscribe(1, 0,
                List.of(new Packet.TopicSubscription("t/#", 0, false, false, 0)), List.of()));
        actors.runAll();
        assertEquals(2, connection.written.size(), "CONNACK and SUBACK");
        subscription = new Subscription(CLIENT, "t/#", null, 0, false, false, 0, 0, "node-1");
    }

    @AfterEach
    void stopTimers() {
        timers.shutdownNow();
    }

    @Test
    void deliveriesRoutedTogetherAreWrittenInOneTurnWithOneFlush() {
        deliver(0, 100);
        assertEquals(1, actors.queued(), "one turn for all of them, not one task each");
        int flushesBefore = connection.flushedAt.size();

        actors.runNext();

        assertEquals(topics(0, 100), connection.publishedTopics());
        assertEquals(flushesBefore + 1, connection.flushedAt.size());
        assertTrue(connection.allFlushed());
    }

    @Test
    void aBacklogLargerThanOneTurnIsDeliveredCompletelyAndInOrderOverSeveralTurns() {
        int count = 2 * DeliveryInbox.DELIVERIES_PER_TURN + 17;
        deliver(0, count);

        actors.runNext();
        assertEquals(topics(0, DeliveryInbox.DELIVERIES_PER_TURN), connection.publishedTopics());
        assertTrue(connection.allFlushed(), "each turn flushes what it wrote");
        assertEquals(1, actors.queued(), "the rest waits for a turn of its own");

        assertEquals(2, actors.runAll());
        assertEquals(topics(0, count), connection.publishedTopics());
        assertTrue(connection.allFlushed());
        assertEquals(0, dropped("qos0_queue_full"));
    }

    @Test
    void qos0HeldWhileTheSocketIsFullGoesOutInBulkWhenItDrainsAndTheExcessIsCounted() {
        connection.writable = false;
        int excess = 250;
        deliver(0, limits.maxQueuedQos0() + excess);
        actors.runAll();
        assertEquals(List.of(), connection.publishedTopics());
        assertEquals(excess, dropped("qos0_queue_full"));

        connection.writable = true;
        int flushesBefore = connection.flushedAt.size();
        session.writable(connection);
        actors.runAll();

        assertEquals(topics(0, limits.maxQueuedQos0()), connection.publishedTopics());
        assertEquals(flushesBefore + 1, connection.flushedAt.size(), "one flush for the whole queue");
        assertTrue(connection.allFlushed());
    }

    @Test
    void aDeliveryAfterTheSocketDrainedFollowsTheHeldOnesEvenBeforeTheWritableSignal() {
        connection.writable = false;
        deliver(0, 10);
        actors.runAll();
        connection.writable = true;

        deliver(10, 1);
        actors.runAll();

        assertEquals(topics(0, 11), connection.publishedTopics());
        assertTrue(connection.allFlushed());
    }

    @Test
    void aDeliveryThatFailsDoesNotHoldUpTheOnesAfterIt() {
        deliver(0, 1);
        session.deliver(message(1), Collections.singletonList(null)); // fails inside the session
        deliver(2, 3);
        actors.runAll();

        assertEquals(List.of("t/0", "t/2", "t/3", "t/4"), connection.publishedTopics());
        assertEquals(1, dropped("delivery_failed"), "the failed one is counted");
        deliver(5, 1);
        actors.runAll();
        assertEquals("t/5", connection.publishedTopics().get(4), "later deliveries still get a turn");
    }

    private void deliver(int from, int count) {
        for (int i = from; i < from + count; i++) {
            session.deliver(message(i), List.of(subscription));
        }
    }

    private static BrokerMessage message(int i) {
        return new BrokerMessage("t/" + i, new byte[] {1}, 0, false, "pub", 1_000L, BrokerMessage.NO_EXPIRY,
                BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null, List.of());
    }

    private static List<String> topics(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> "t/" + i).toList();
    }

    private double dropped(String reason) {
        Counter c = meters.find("fleetmq.messages.dropped").tag("reason", reason).counter();
        return c == null ? 0 : c.count();
    }
}
