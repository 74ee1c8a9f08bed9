package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mqtt.max-session-expiry of 2 s bounds every session that outlives its connection. */
class SessionExpiryBoundTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("MQTT_MAX_SESSION_EXPIRY", "2"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    @DisplayName("an MQTT 3.1.1 clean-session-0 session ends mqtt.max-session-expiry after its client left, with its queue")
    void aV3PersistentSessionEndsAfterTheMaximumExpiry() {
        Mqtt5BlockingClient other = broker.connectedV5("bounded-other");
        double without = broker.sessions();
        Mqtt3BlockingClient c = broker.v3("bounded-v3");
        c.connectWith().cleanSession(false).send();
        c.subscribeWith().topicFilter("bounded/t").qos(MqttQos.AT_LEAST_ONCE).send();
        assertEquals(without + 1, broker.sessions());
        c.disconnect();
        // Without the bound a 3.1.1 session with clean session 0 would wait for its client forever.
        Await.until(Duration.ofSeconds(30), "the 3.1.1 session to end", () -> broker.sessions() == without);
        assertFalse(c.connectWith().cleanSession(false).send().isSessionPresent(), "the session is gone");
        c.disconnect();
        other.disconnect();
    }
}
