package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mqtt.publish-rate-exceeded: disconnect}: a client beyond its rate is told 0x96 and closed. */
class PublishRateDisconnectTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of(
                "MQTT_MAX_PUBLISH_RATE", "5",
                "MQTT_PUBLISH_RATE_EXCEEDED", "disconnect"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    @DisplayName("beyond mqtt.max-publish-rate with publish-rate-exceeded disconnect: DISCONNECT 0x96, counted")
    void aClientBeyondItsRateIsDisconnectedWithMessageRateTooHigh() throws Exception {
        double before = broker.limitExceeded("publish_rate");
        try (RawMqtt raw = broker.rawV5("rate-flood")) {
            ByteArrayOutputStream burst = new ByteArrayOutputStream();
            for (int i = 0; i < 20; i++) { // four times the one-second burst, in one write
                burst.writeBytes(RawMqtt.publishV5("flood/t", 0, 0, new byte[] {(byte) i}));
            }
            raw.send(burst.toByteArray());
            byte[] disconnect = raw.readType(14);
            assertEquals(0x96, disconnect[2] & 0xFF, "DISCONNECT with Message rate too high");
            assertTrue(raw.closedByBroker(), "closed after DISCONNECT");
        }
        Await.until(Duration.ofSeconds(10), "publish_rate counted", () -> broker.limitExceeded("publish_rate") > before);
        // Other clients carry on.
        try (RawMqtt other = broker.rawV5("rate-calm")) {
            other.send(RawMqtt.publishV5("calm/t", 1, 1, new byte[] {1}));
            assertEquals(4, (other.readType(4)[0] & 0xF0) >> 4, "PUBACK");
        }
    }
}
