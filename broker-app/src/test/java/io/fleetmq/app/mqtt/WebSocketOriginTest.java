package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.app.support.TestBroker;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MQTT_WS_ALLOWED_ORIGINS: browser pages from other origins cannot open a WebSocket to the broker. */
class WebSocketOriginTest {

    @TempDir
    static Path dir;
    static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dir, Map.of("MQTT_WS_ALLOWED_ORIGINS",
                "https://console.example.com, http://localhost:3000"));
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    @DisplayName("An upgrade from an allowed origin, or with no Origin (not a browser), is accepted; another origin gets 403")
    void origins() throws Exception {
        int port = broker.node().mqttPort("WebSocket");
        assertEquals(WebSocketUpgrade.SWITCHING, WebSocketUpgrade.statusLine(port, "https://console.example.com", "mqtt"));
        assertEquals(WebSocketUpgrade.SWITCHING, WebSocketUpgrade.statusLine(port, "HTTP://LOCALHOST:3000", "mqtt"));
        assertEquals(WebSocketUpgrade.SWITCHING, WebSocketUpgrade.statusLine(port, null, "mqtt"));
        assertEquals("HTTP/1.1 403 Forbidden", WebSocketUpgrade.statusLine(port, "https://evil.example", "mqtt"));
        assertEquals("HTTP/1.1 403 Forbidden", WebSocketUpgrade.statusLine(port, "https://console.example.com:8443", "mqtt"));
    }
}
