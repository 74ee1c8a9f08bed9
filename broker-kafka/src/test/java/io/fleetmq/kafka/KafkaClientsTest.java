package io.fleetmq.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

/** The settings each Kafka client of the node is built with, and which of them wins. */
class KafkaClientsTest {

    private static KafkaClients clients(Map<String, String> operators) {
        KafkaSettings settings = new KafkaSettings("127.0.0.1:1", "t.", 1, 1, 1, (short) 1, Duration.ofSeconds(10), 1,
                268_435_455, operators);
        return new KafkaClients(settings, "n1");
    }

    @Test
    void theNodesTuningAppliesWhenTheOperatorSetsNone() {
        Properties p = clients(Map.of("security.protocol", "PLAINTEXT")).producerProperties("publish",
                KafkaClients.SEND_WHEN_FREE);
        assertEquals(0, p.get(ProducerConfig.LINGER_MS_CONFIG));
        assertEquals(1, p.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION));
        assertEquals("all", p.get(ProducerConfig.ACKS_CONFIG));
        assertEquals(true, p.get(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG));
    }

    @Test
    void theOperatorsClientSettingsWinOverTheNodesTuning() {
        KafkaClients c = clients(Map.of("security.protocol", "SSL", "linger.ms", "5", "batch.size", "65536",
                "fetch.max.wait.ms", "20"));
        Properties producer = c.producerProperties("publish", KafkaClients.SEND_WHEN_FREE);
        assertEquals("5", producer.get(ProducerConfig.LINGER_MS_CONFIG), "over the publish producer's own 0");
        assertEquals("65536", producer.get(ProducerConfig.BATCH_SIZE_CONFIG));
        assertEquals("SSL", producer.get("security.protocol"));
        assertEquals("all", producer.get(ProducerConfig.ACKS_CONFIG));
        Properties consumer = c.consumerProperties("routing", "g", Map.of(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 1));
        assertEquals("20", consumer.get(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), "over the consumer's own 1");
        assertEquals("g", consumer.get(ConsumerConfig.GROUP_ID_CONFIG));
        assertEquals("read_committed", consumer.get(ConsumerConfig.ISOLATION_LEVEL_CONFIG));
    }
}
