package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Connections per node and new connections per second per listener, each on a node of its own. */
class ConnectionLimitsTest {

    @TempDir
    Path dataDir;

    @Test
    @DisplayName("beyond mqtt.max-connections: CONNACK 0x97, 3.1.1 return code 3; a freed place is taken again")
    void maxConnectionsPerNode() throws Exception {
        try (TestBroker broker = TestBroker.start(dataDir, Map.of("MQTT_MAX_CONNECTIONS", "3"))) {
            List<RawMqtt> open = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    open.add(broker.rawV5("held-" + i));
                }
                try (RawMqtt raw = broker.raw()) {
                    raw.send(RawMqtt.connectV5("one-too-many"));
                    String connack = raw.readHex();
                    assertEquals("97", connack.substring(6, 8), connack);
                    assertNull(raw.read(), "closed after the refusal");
                }
                try (RawMqtt raw = broker.raw()) {
                    raw.send(RawMqtt.connectV311("one-too-many-311"));
                    assertEquals("20020003", raw.readHex());
                }
                open.remove(0).close();
                Await.until(Duration.ofSeconds(10), "a connection to be accepted again", () -> {
                    try (RawMqtt raw = broker.raw()) {
                        raw.send(RawMqtt.connectV5("again"));
                        return raw.readHex().substring(6, 8).equals("00");
                    } catch (IOException e) {
                        return false;
                    }
                });
                assertTrue(broker.limitExceeded("connections") >= 2, "counted");
            } finally {
                for (RawMqtt r : open) {
                    r.close();
                }
            }
        }
    }

    @Test
    @DisplayName("beyond mqtt.max-connection-rate: the listener accepts more slowly and counts it; every client is served")
    void newConnectionsPerSecondPerListener() throws Exception {
        try (TestBroker broker = TestBroker.start(dataDir, Map.of("MQTT_MAX_CONNECTION_RATE", "2"))) {
            // Opened at once: the first two are within the rate, the rest wait in the accept queue.
            java.util.List<RawMqtt> burst = new java.util.ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    RawMqtt raw = broker.raw();
                    burst.add(raw);
                    raw.send(RawMqtt.connectV5("burst-" + i));
                }
                for (int i = 0; i < burst.size(); i++) {
                    byte[] connack = burst.get(i).read();
                    assertTrue(connack != null && connack[0] == 0x20, "burst-" + i + " gets a CONNACK");
                    assertEquals(0, connack[3], "burst-" + i + " is accepted, not refused");
                }
            } finally {
                for (RawMqtt raw : burst) {
                    raw.close();
                }
            }
            Await.until(Duration.ofSeconds(10), "the connections beyond the rate to be counted",
                    () -> broker.limitExceeded("connection_rate") >= 1);
        }
    }
}
