package io.fleetmq.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.DeadLetters;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.TestServices;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record Kafka can never take no longer stalls the routing of its {@code publish} partition: an
 * APPLICATION backlog topic created (before this broker sized its topics) with a limit smaller than
 * a message makes that hand-off fail for good; it goes to the dead-letter topic, counted, and the
 * messages after it are routed, each once.
 */
class DeadLetterTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dataDir;

    private static String header(ConsumerRecord<String, byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    @Test
    void aHandOffKafkaCanNeverTakeIsDeadLetteredAndTheMessagesAfterItAreRoutedOnce() throws Exception {
        String prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + ".";
        BrokerTopics topics = new BrokerTopics(prefix);
        Properties props = new Properties();
        props.put("bootstrap.servers", TestServices.shared().kafkaBootstrapServers());
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(topics.app("app-1"), 1, (short) 1)
                    .configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "2000")))).all().get();
        }
        try (TestBroker broker = TestBroker.start(dataDir, Map.of("KAFKA_TOPIC_PREFIX", prefix,
                "APPLICATION_CLIENT_ID_PATTERN", "app-.*"))) {
            Mqtt5BlockingClient app = broker.v5("app-1");
            List<Mqtt5Publish> received = new CopyOnWriteArrayList<>();
            app.toAsync().publishes(MqttGlobalPublishFilter.ALL, received::add);
            app.connectWith().cleanStart(true).sessionExpiryInterval(3600).send();
            app.subscribeWith().topicFilter("dl/#").qos(MqttQos.AT_LEAST_ONCE).send();

            Mqtt5BlockingClient pub = broker.connectedV5("publisher");
            byte[] big = new byte[50_000];
            new Random(7).nextBytes(big); // incompressible: stays above the topic's 2000 bytes
            pub.publishWith().topic("dl/big").qos(MqttQos.AT_LEAST_ONCE).payload(big).send();
            pub.publishWith().topic("dl/small").qos(MqttQos.AT_LEAST_ONCE).payload("small".getBytes()).send();
            pub.publishWith().topic("dl/end").qos(MqttQos.AT_LEAST_ONCE).payload("end".getBytes()).send();

            Await.until(WAIT, "the messages after the one Kafka refuses arrive",
                    () -> received.stream().anyMatch(p -> p.getTopic().toString().equals("dl/end")));
            assertEquals(List.of("dl/small", "dl/end"), received.stream().map(p -> p.getTopic().toString()).toList(),
                    "each message after it once, and the refused one not at all");
            Await.until(WAIT, "the dead letter is counted", () -> broker.dropped(DeadLetters.DROP_REASON) == 1);
            Await.until(WAIT, "the routing backlog is empty", () -> routingBacklog(broker) == 0);

            ConsumerRecord<String, byte[]> letter = readOne(topics.deadLetter());
            assertEquals(topics.app("app-1"), header(letter, DeadLetters.TARGET_TOPIC));
            assertEquals(topics.publish(), header(letter, DeadLetters.SOURCE_TOPIC));
            assertTrue(header(letter, DeadLetters.REASON).contains("not storable"), header(letter, DeadLetters.REASON));
            assertTrue(letter.value().length > big.length, "the hand-off is kept whole");
            app.disconnect();
            pub.disconnect();
        }
    }

    private static double routingBacklog(TestBroker broker) {
        for (String line : broker.scrapeMetrics().split("\n")) {
            if (line.startsWith("fleetmq_publish_routing_backlog")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return -1;
    }

    private static ConsumerRecord<String, byte[]> readOne(String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestServices.shared().kafkaBootstrapServers());
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            List<ConsumerRecord<String, byte[]>> all = new CopyOnWriteArrayList<>();
            Await.until(WAIT, "a dead letter in " + topic, () -> {
                c.poll(Duration.ofMillis(200)).forEach(all::add);
                return !all.isEmpty();
            });
            assertEquals(1, all.size());
            return all.get(0);
        }
    }
}
