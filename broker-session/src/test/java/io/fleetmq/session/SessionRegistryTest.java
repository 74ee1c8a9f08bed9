package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.retained.RetainedIndex;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Sessions coming and going in the registry, with the actors' turns run by hand so that the order
 * of mailbox tasks is the test's to choose.
 */
class SessionRegistryTest {

    private final Deque<Runnable> turns = new ArrayDeque<>();
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private SessionRegistry registry;
    private final InMemoryConnectSequence sequence = new InMemoryConnectSequence(turns::add);

    @BeforeEach
    void setUp() {
        registry = registry(turns::add, sequence);
    }

    /** A registry whose actors take their turns on {@code actors}, answered by {@code sequence}. */
    private SessionRegistry registry(java.util.concurrent.Executor actors, InMemoryConnectSequence sequence) {
        // The paths exercised here publish nothing: no publish log or retained store is needed.
        SessionServices services = new SessionServices("node", MqttLimits.defaults(), (PublishPort) null, null,
                new SubscriptionTrie(), new RetainedIndex<BrokerMessage>(), actors, timers,
                new SimpleMeterRegistry(), new MessageDrops(new SimpleMeterRegistry()), System::currentTimeMillis,
                sequence, null, new io.fleetmq.session.cluster.ClientTypes(null), null, null);
        SessionRegistry created = new SessionRegistry(services);
        sequence.registry = created;
        return created;
    }

    @AfterEach
    void tearDown() {
        timers.shutdownNow();
    }

    private void runTurns() {
        Runnable turn;
        while ((turn = turns.poll()) != null) {
            turn.run();
        }
    }

    /** An MQTT 5 CONNECT with clean start and Session Expiry Interval 0. */
    private static Packet.Connect connect(String clientId) {
        return new Packet.Connect(ProtocolVersion.V5, clientId, true, 60, null, null, null, 0, -1, -1, 0,
                false, true, null, List.of());
    }

    @Test
    @DisplayName("a reconnect queued while the session ends stays with the actor that answers it, so its packets are not lost")
    void aReconnectQueuedWhileTheSessionEndsKeepsItsActor() {
        RecordingConnection first = new RecordingConnection();
        SessionActor actor = registry.connect(connect("c"), first);
        runTurns();
        assertInstanceOf(Packet.ConnAck.class, first.written.get(0));

        // The old connection drops (expiry 0: the session will end) and, before the session has
        // processed that, the client is back with a new connection.
        actor.connectionLost(first);
        RecordingConnection second = new RecordingConnection();
        SessionActor owner = registry.connect(connect("c"), second);
        runTurns();
        Packet.ConnAck ack = assertInstanceOf(Packet.ConnAck.class, second.written.get(0));
        assertEquals(0, ack.reasonCode().value());
        assertFalse(ack.sessionPresent(), "the old session ended");

        owner.packet(second, new Packet.PingReq());
        runTurns();
        assertEquals(2, second.written.size(), "the new connection's PINGREQ was answered: " + second.written);
        assertInstanceOf(Packet.PingResp.class, second.written.get(1));
        assertSame(owner, registry.get("c"));
    }

    @Test
    @DisplayName("a session that ends with no CONNECT queued leaves the registry; the next CONNECT gets a new actor")
    void anEndedSessionLeavesTheRegistry() {
        RecordingConnection first = new RecordingConnection();
        SessionActor actor = registry.connect(connect("gone"), first);
        runTurns();
        actor.connectionLost(first);
        runTurns();
        assertNull(registry.get("gone"));
        assertEquals(0, registry.size());

        RecordingConnection again = new RecordingConnection();
        SessionActor next = registry.connect(connect("gone"), again);
        assertNotSame(actor, next);
        next.packet(again, new Packet.PingReq());
        runTurns();
        assertInstanceOf(Packet.ConnAck.class, again.written.get(0));
        assertInstanceOf(Packet.PingResp.class, again.written.get(1));
    }

    @Test
    @DisplayName("a CONNECT answered before the registry's update has finished still reaches its session")
    void anAnswerFasterThanTheRegistryFindsItsSession() {
        // Everything runs on the caller's thread: the actor's turn as soon as it is told, the connect
        // sequence's answer as soon as it is asked. An answer can thus only find the session if the
        // CONNECT is told after the registry holds its actor, as on a busy node where the thread that
        // registers the session is preempted while the actor and the sequence run on.
        InMemoryConnectSequence direct = new InMemoryConnectSequence(Runnable::run);
        SessionRegistry eager = registry(Runnable::run, direct);

        RecordingConnection conn = new RecordingConnection();
        SessionActor actor = eager.connect(connect("fast"), conn);

        assertFalse(conn.written.isEmpty(), "the CONNECT was answered");
        Packet.ConnAck ack = assertInstanceOf(Packet.ConnAck.class, conn.written.get(0));
        assertEquals(0, ack.reasonCode().value());
        assertSame(actor, eager.get("fast"));
        assertFalse(direct.events.stream().anyMatch(e -> e instanceof io.fleetmq.core.cluster.SessionEvent.Disconnected),
                "the acceptance was not undone: " + direct.events);
    }
}
