package io.fleetmq.app.support;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Waiting for what a HiveMQ client receives. */
public final class Received {

    private Received() {
    }

    /** The next message, failing after 20 s. */
    public static Mqtt5Publish next(Mqtt5BlockingClient.Mqtt5Publishes publishes) throws InterruptedException {
        Optional<Mqtt5Publish> p = publishes.receive(20, TimeUnit.SECONDS);
        assertTrue(p.isPresent(), "a message within 20 s");
        return p.get();
    }

    /**
     * True if nothing arrives within {@code millis}. Only for asserting that the broker does not
     * send something it would otherwise send at once, right after an action.
     */
    public static boolean nothingWithin(Mqtt5BlockingClient.Mqtt5Publishes publishes, long millis)
            throws InterruptedException {
        return publishes.receive(millis, TimeUnit.MILLISECONDS).isEmpty();
    }
}
