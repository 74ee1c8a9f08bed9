package io.fleetmq.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Mosquitto's MQTT 5 bridge asks for Clean Start 0 with Session Expiry 0; a configured client ID
 * pattern gives it a persistent session anyway, and nothing else changes.
 */
class BridgeSessionsTest {

    private static final BridgeSessions BRIDGES = BridgeSessions.of("bridge-.*", 86_400);

    private static Packet.Connect connect(ProtocolVersion version, String clientId, boolean cleanStart, long expiry) {
        return new Packet.Connect(version, clientId, cleanStart, 60, null, null, null, expiry, 0, 0, 0, false, true,
                null, List.of());
    }

    private static MqttLimits limits(BridgeSessions bridges) {
        return MqttLimits.defaults().withBridgeSessions(bridges);
    }

    @Test
    void aMatchingClientResumingWithExpiryZeroGetsTheBridgeExpiry() {
        assertEquals(86_400, BRIDGES.requestedExpiry("bridge-site1", connect(ProtocolVersion.V5, "bridge-site1", false, 0)));
    }

    @Test
    void everythingElseKeepsWhatItAskedFor() {
        assertEquals(0, BRIDGES.requestedExpiry("bridge-a", connect(ProtocolVersion.V5, "bridge-a", true, 0)),
                "Clean Start 1 with expiry 0 is a clean session by intent");
        assertEquals(60, BRIDGES.requestedExpiry("bridge-a", connect(ProtocolVersion.V5, "bridge-a", false, 60)),
                "an expiry the client chose is kept");
        assertEquals(0, BRIDGES.requestedExpiry("sensor-1", connect(ProtocolVersion.V5, "sensor-1", false, 0)),
                "not a bridge");
        assertEquals(0, BRIDGES.requestedExpiry("x-bridge-a", connect(ProtocolVersion.V5, "x-bridge-a", false, 0)),
                "the pattern matches the whole ID");
        assertEquals(0, BridgeSessions.NONE.requestedExpiry("bridge-a", connect(ProtocolVersion.V5, "bridge-a", false, 0)),
                "off by default");
        assertEquals(SessionLifetime.NEVER_EXPIRES,
                BRIDGES.requestedExpiry("bridge-a", connect(ProtocolVersion.V3_1_1, "bridge-a", false, 0)),
                "MQTT 3.1.1 clean session 0 already asks for a session that lasts until the broker's bound");
    }

    @Test
    void theBrokersMaximumStillBoundsIt() {
        MqttLimits d = MqttLimits.defaults();
        MqttLimits bounded = new MqttLimits(d.receiveMaximum(), d.maximumPacketSize(), d.topicAliasMaximum(),
                d.maxKeepAliveSeconds(), 3_600, d.maxQueuedMessages(), d.maxQueuedQos0(), d.maxOutboundAliases(),
                d.maxInflightMessages(), d.maxSubscriptions(), BRIDGES);
        assertEquals(3_600, bounded.sessionExpiry("bridge-a", connect(ProtocolVersion.V5, "bridge-a", false, 0)));
    }

    @Test
    void theBridgeIsToldItsExpiryInConnAckAndItsSessionOutlivesTheConnection() {
        SessionHarness h = new SessionHarness(limits(BRIDGES), false);
        RecordingConnection first = h.connect("bridge-a", false, 0, 10);
        Packet.ConnAck connAck = first.written(Packet.ConnAck.class).get(0);
        assertEquals(86_400, connAck.sessionExpirySeconds(), "MQTT 5 lets the server say which expiry holds");
        h.subscribe("bridge-a", first, "b/#", 1);
        h.lose("bridge-a", first);
        h.deliver("bridge-a", h.message("b/1", 1), 1);

        RecordingConnection second = h.connect("bridge-a", false, 0, 10);
        assertTrue(second.written(Packet.ConnAck.class).get(0).sessionPresent());
        assertEquals(List.of("b/1"), second.publishedTopics(), "what came while it was away");
    }

    @Test
    void anOrdinaryClientAskingForExpiryZeroLosesItsSession() {
        SessionHarness h = new SessionHarness(limits(BRIDGES), false);
        RecordingConnection first = h.connect("sensor-1", false, 0, 10);
        assertEquals(-1, first.written(Packet.ConnAck.class).get(0).sessionExpirySeconds(), "as asked: not sent");
        h.lose("sensor-1", first);
        RecordingConnection second = h.connect("sensor-1", false, 0, 10);
        assertFalse(second.written(Packet.ConnAck.class).get(0).sessionPresent());
    }
}
