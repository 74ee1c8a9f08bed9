package io.fleetmq.app.support;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Writes a Kafka record and a database row, and reads them back, to prove data survives a restart. */
public final class Persisted {

    private Persisted() {
    }

    public static void writeKafka(String bootstrap, String topic, String key, String value) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, key, value)).get();
        }
    }

    /** Every record of partition 0 of {@code topic}, from the beginning, as key=value. */
    public static List<String> readKafka(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(20)).get(tp);
            List<String> out = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(r.key() + "=" + r.value());
                }
            }
            return out;
        }
    }

    public static void writeRow(String url, String user, String password, String name, String json) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, user, password);
             PreparedStatement st = c.prepareStatement("INSERT INTO broker_setting (name, value) VALUES (?, ?::jsonb)")) {
            st.setString(1, name);
            st.setString(2, json);
            st.executeUpdate();
        }
    }

    /** The row's value as JSON text, or null. */
    public static String readRow(String url, String user, String password, String name) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, user, password);
             PreparedStatement st = c.prepareStatement("SELECT value::text FROM broker_setting WHERE name = ?")) {
            st.setString(1, name);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /** Parses KEY=value lines, as the services command prints them. */
    public static Map<String, String> parseEnvLines(String text) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        text.lines().filter(l -> l.matches("[A-Z_]+=.*")).forEach(l -> {
            int eq = l.indexOf('=');
            out.put(l.substring(0, eq), l.substring(eq + 1));
        });
        return out;
    }
}
