package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keep alive: one and a half times the interval of silence ends the connection with 0x8D, PINGREQ
 * keeps it open, and a Server Keep Alive is enforced like the client's own. A node bounding keep
 * alive at 2 s.
 */
class KeepAliveTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("MQTT_MAX_KEEP_ALIVE", "2"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-22] silence beyond one and a half keep alives ends the connection with DISCONNECT 0x8D")
    void silenceBeyondOneAndAHalfKeepAlivesEndsTheConnectionWith0x8D() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 1, "sleepy", "00"));
            raw.readType(2);
            byte[] disconnect = raw.readType(14);
            assertEquals(0x8D, disconnect[2] & 0xFF, "[MQTT-3.1.2-22] keep alive timeout");
            assertTrue(raw.closedByBroker());
        }
    }

    @Test
    @DisplayName("[MQTT-3.12.4-1] PINGREQ gets PINGRESP and keeps a connection with keep alive 1 s open for 3 s")
    void pingKeepsTheConnectionOpen() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 1, "pinger", "00"));
            raw.readType(2);
            raw.socketTimeout(500);
            for (int i = 0; i < 6; i++) {
                assertTrue(raw.nothingWithin(), "no DISCONNECT while pinging every half second");
                raw.sendHex("c000");
                assertEquals("d000", raw.readHex(), "PINGRESP");
            }
        }
    }

    @Test
    @DisplayName("[MQTT-3.2.2-21] a client asking for no keep alive gets Server Keep Alive 2 s and is held to it")
    void theServerKeepAliveIsEnforced() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(5, true, 0, "no-keepalive", "00"));
            RawMqtt.ConnAck ack = RawMqtt.parseConnAckV5(raw.readType(2));
            assertEquals(2L, ack.properties().get(0x13), "Server Keep Alive");
            byte[] disconnect = raw.readType(14);
            assertEquals(0x8D, disconnect[2] & 0xFF);
        }
    }

    @Test
    @DisplayName("3.1.2.10 3.1.1 clients have no DISCONNECT from the server: keep-alive timeout just closes")
    void mqtt311KeepAliveTimeoutCloses() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            raw.send(RawMqtt.connect(4, true, 1, "sleepy-311", null));
            assertEquals("20020000", raw.readHex());
            assertNull(raw.read(), "closed without a packet");
        }
    }
}
