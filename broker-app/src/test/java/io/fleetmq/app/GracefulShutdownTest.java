package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import io.fleetmq.app.support.TestBroker;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A stopping node tells its MQTT 5 clients why before it closes their connections [MQTT-3.14.2]. */
class GracefulShutdownTest {

    @TempDir
    Path dir;

    @Test
    void connectedClientsAreToldTheServerIsShuttingDown() throws Exception {
        TestBroker broker = TestBroker.start(dir, Map.of());
        CompletableFuture<Throwable> dropped = new CompletableFuture<>();
        Mqtt5BlockingClient client = Mqtt5Client.builder().identifier("leaving").serverHost("127.0.0.1")
                .serverPort(broker.mqttPort())
                .addDisconnectedListener(ctx -> dropped.complete(ctx.getCause()))
                .buildBlocking();
        client.connect();
        broker.close();
        Throwable cause = dropped.get(20, TimeUnit.SECONDS);
        assertTrue(cause instanceof Mqtt5DisconnectException, String.valueOf(cause));
        assertEquals(Mqtt5DisconnectReasonCode.SERVER_SHUTTING_DOWN,
                ((Mqtt5DisconnectException) cause).getMqttMessage().getReasonCode());
    }
}
