package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.embedded.EmbeddedKafkaServer;
import io.fleetmq.testkit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Promise 1, acknowledged means stored: with Kafka gone, no PUBLISH is acknowledged as stored. A
 * v5 publisher gets an error reason code, a 3.1.1 publisher (which has no such code) is
 * disconnected.
 */
class KafkaOutageTest {

    @TempDir
    Path dir;

    @Test
    void withKafkaDownNothingIsAcknowledgedAsStored() throws Exception {
        EmbeddedKafkaServer kafka = new EmbeddedKafkaServer(dir.resolve("kafka"), "127.0.0.1", 0, 0);
        kafka.start();
        try (TestBroker broker = TestBroker.start(dir.resolve("node"), Map.of(
                "KAFKA_BOOTSTRAP_SERVERS", kafka.bootstrapServers(),
                "KAFKA_REQUEST_TIMEOUT", "2s",
                // Longer than the producer's delivery timeout, so the node answers the PUBLISH before
                // it would fence itself (which ends every connection; tested in KafkaLinkCutIT).
                "CLUSTER_NODE_TIMEOUT", "60s"))) {
            int port = broker.mqttPort();
            Mqtt5BlockingClient v5 = Mqtt5Client.builder().identifier("outage-v5").serverHost("127.0.0.1")
                    .serverPort(port).buildBlocking();
            v5.connect();
            CompletableFuture<Throwable> v3Dropped = new CompletableFuture<>();
            Mqtt3BlockingClient v3 = Mqtt3Client.builder().identifier("outage-v3").serverHost("127.0.0.1")
                    .serverPort(port).addDisconnectedListener(ctx -> v3Dropped.complete(ctx.getCause()))
                    .buildBlocking();
            v3.connect();

            Mqtt5PublishResult ok = v5.publishWith().topic("outage/t").qos(MqttQos.AT_LEAST_ONCE)
                    .payload(new byte[] {1}).send();
            assertFalse(ok.getError().isPresent(), "stored while Kafka is up");

            kafka.stop();

            Mqtt5PubAckException refused = assertThrows(Mqtt5PubAckException.class, () -> v5.publishWith()
                    .topic("outage/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {2}).send());
            assertEquals(Mqtt5PubAckReasonCode.UNSPECIFIED_ERROR, refused.getMqttMessage().getReasonCode(),
                    "PUBACK carries an error reason code");

            v3.toAsync().publishWith().topic("outage/t").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {3}).send();
            assertTrue(v3Dropped.get(60, TimeUnit.SECONDS) != null, "3.1.1 publisher disconnected");

            Await.until(Duration.ofSeconds(5), "the drop to be counted", () -> broker.node().metrics().scrape()
                    .contains("fleetmq_messages_dropped_total{node=\"test-node\",reason=\"publish_not_stored\"}"));
            v5.disconnect();
        } finally {
            kafka.stop();
        }
    }
}
