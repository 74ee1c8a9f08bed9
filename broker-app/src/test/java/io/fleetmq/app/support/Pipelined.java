package io.fleetmq.app.support;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * QoS 1 messages sent one after another without waiting for each PUBACK (the client keeps within the
 * server's Receive Maximum), as a device with a backlog sends them; returns once every one is
 * acknowledged. Order on one connection is kept [MQTT-4.6.0-2]; waiting for each PUBACK in turn
 * would only spend a Kafka round trip per message.
 */
public final class Pipelined {

    private Pipelined() {
    }

    /** Publishes {@code payloads[i]} to {@code topics[i]}, in that order, and waits for every PUBACK. */
    public static void publish(Mqtt5BlockingClient client, List<String> topics, List<byte[]> payloads) {
        List<CompletableFuture<Mqtt5PublishResult>> acks = new ArrayList<>(topics.size());
        for (int i = 0; i < topics.size(); i++) {
            acks.add(client.toAsync().publishWith().topic(topics.get(i)).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(payloads.get(i)).send());
        }
        for (int i = 0; i < acks.size(); i++) {
            Mqtt5PublishResult result = acks.get(i).join();
            if (result.getError().isPresent()) {
                throw new AssertionError("message " + i + " to " + topics.get(i) + " not acknowledged",
                        result.getError().get());
            }
        }
    }
}
