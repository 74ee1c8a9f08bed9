package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DESIGN "The client actor": a QoS 0 subscriber that stops reading its socket has a bounded queue;
 * what does not fit is dropped and counted, and nobody else notices. A node holding at most 20 QoS
 * 0 messages per blocked client, so the bound is reached quickly.
 */
class BackPressureTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of("MQTT_MAX_QUEUED_QOS0", "20"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    @DisplayName("4.3.1 a subscriber that does not read gets its QoS 0 flood dropped and counted as qos0_queue_full; the node stays ready and another client keeps receiving")
    void aSubscriberThatDoesNotReadIsBounded() throws Exception {
        double droppedBefore = broker.dropped("qos0_queue_full");
        Mqtt5BlockingClient other = broker.connectedV5("flood-bystander");
        try (RawMqtt stuck = RawMqtt.connectWithReceiveBuffer(broker.mqttPort(), 4096);
             Mqtt5BlockingClient.Mqtt5Publishes otherIn = other.publishes(MqttGlobalPublishFilter.ALL)) {
            stuck.send(RawMqtt.connectV5("flood-stuck"));
            stuck.readType(2);
            stuck.send(RawMqtt.subscribeV5(1, "flood/#", 0));
            stuck.readType(9);
            // From here on the stuck client reads nothing. The bystander is the only other
            // subscriber, on another topic, so every qos0_queue_full drop is the stuck client's.
            other.subscribeWith().topicFilter("other/t").qos(MqttQos.AT_LEAST_ONCE).send();

            Mqtt5AsyncClient publisher = broker.connectedV5("flood-pub").toAsync();
            byte[] payload = new byte[1024];
            int sent = 0;
            int round = 0;
            while (broker.dropped("qos0_queue_full") <= droppedBefore && sent < 20_000) {
                List<CompletableFuture<?>> batch = new ArrayList<>();
                for (int i = 0; i < 250; i++) {
                    batch.add(publisher.publishWith().topic("flood/t").qos(MqttQos.AT_MOST_ONCE).payload(payload).send());
                }
                CompletableFuture.allOf(batch.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
                sent += batch.size();
                // The bystander keeps receiving while the flood goes on.
                byte marker = (byte) round++;
                publisher.publishWith().topic("other/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {marker})
                        .send().get(30, TimeUnit.SECONDS);
                Mqtt5Publish m = Received.next(otherIn);
                assertArrayEquals(new byte[] {marker}, m.getPayloadAsBytes(), "round " + marker);
            }
            assertTrue(broker.dropped("qos0_queue_full") > droppedBefore,
                    "drops counted in /metrics after " + sent + " messages of 1 KiB");
            assertTrue(broker.isReady(), "the node is still ready");
            publisher.disconnect().get(30, TimeUnit.SECONDS);
        }
        other.disconnect();
    }
}
