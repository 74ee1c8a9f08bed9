package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.embedded.EmbeddedKafkaServer;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TcpProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka stalls while a publisher floods the node: once the publish producer's buffer is full the
 * publisher waits (its socket is no longer read) instead of a shared actor thread blocking in the
 * write or the PUBLISH being refused; when Kafka answers again every message is stored, acknowledged
 * and delivered.
 */
class KafkaBackPressureTest {

    private static final int MESSAGES = 300;
    private static final int PAYLOAD = 16 * 1024;

    @TempDir
    Path dir;

    @Test
    void aFullProducerMakesPublishersWaitAndNothingIsRefusedOrLost() throws Exception {
        int proxied = FreePorts.next();
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", proxied)) {
            EmbeddedKafkaServer kafka = new EmbeddedKafkaServer(dir.resolve("kafka"), "127.0.0.1", 0, 0)
                    .withListener("PROXIED", proxied, proxy.address());
            kafka.start();
            try (TestBroker broker = TestBroker.start(dir.resolve("node"), Map.of(
                    "KAFKA_BOOTSTRAP_SERVERS", proxy.address(),
                    "KAFKA_PUBLISH_BUFFER", Integer.toString(1024 * 1024),
                    // Not the subject here: the node must not fence itself while Kafka stalls.
                    "CLUSTER_NODE_TIMEOUT", "120s"))) {
                int port = broker.mqttPort();
                Set<Integer> received = ConcurrentHashMap.newKeySet();
                Mqtt5BlockingClient subscriber = Mqtt5Client.builder().identifier("bp-sub").serverHost("127.0.0.1")
                        .serverPort(port).buildBlocking();
                subscriber.connect();
                subscriber.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                        p -> received.add(java.nio.ByteBuffer.wrap(p.getPayloadAsBytes()).getInt()));
                subscriber.subscribeWith().topicFilter("bp/#").qos(MqttQos.AT_LEAST_ONCE).send();
                Mqtt5AsyncClient publisher = Mqtt5Client.builder().identifier("bp-pub").serverHost("127.0.0.1")
                        .serverPort(port).buildAsync();
                publisher.connect().get(30, TimeUnit.SECONDS);

                // Kafka stops answering: records pile up in the producer's 1 MiB buffer.
                proxy.pause(TcpProxy.Direction.UPSTREAM);
                List<CompletableFuture<Mqtt5PublishResult>> results = new ArrayList<>();
                java.util.Random random = new java.util.Random(1);
                for (int i = 0; i < MESSAGES; i++) {
                    byte[] payload = new byte[PAYLOAD];
                    random.nextBytes(payload); // incompressible: the buffer fills as it would in production
                    java.nio.ByteBuffer.wrap(payload).putInt(i);
                    results.add(publisher.publishWith().topic("bp/t").qos(MqttQos.AT_LEAST_ONCE).payload(payload)
                            .send());
                }
                Await.until(Duration.ofSeconds(60), "the publisher to wait for room in the producer",
                        () -> counter(broker, "fleetmq_publish_waits_total") > 0);
                assertFalse(results.stream().allMatch(CompletableFuture::isDone),
                        "nothing is acknowledged while Kafka stalls");

                proxy.resume(TcpProxy.Direction.UPSTREAM);
                CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
                for (CompletableFuture<Mqtt5PublishResult> r : results) {
                    assertTrue(r.get().getError().isEmpty(), "stored and acknowledged: " + r.get());
                }
                Await.until(Duration.ofSeconds(60), "every message at the subscriber",
                        () -> received.size() == MESSAGES);
                assertEquals(0, counter(broker, "fleetmq_messages_dropped_total{node=\"test-node\",reason=\"publish_not_stored\"}"),
                        "no PUBLISH was refused");
                publisher.disconnect().get(10, TimeUnit.SECONDS);
                subscriber.disconnect();
            } finally {
                kafka.stop();
            }
        }
    }

    private static double counter(TestBroker broker, String name) {
        String scrape = broker.node().metrics().scrape();
        Matcher m = Pattern.compile("^" + Pattern.quote(name) + "(\\{[^}]*\\})? ([0-9.eE+-]+)$", Pattern.MULTILINE)
                .matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(2)) : 0;
    }
}
