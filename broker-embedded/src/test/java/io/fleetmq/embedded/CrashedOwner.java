package io.fleetmq.embedded;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Run in a separate JVM by {@link CrashRecoveryTest}: starts the services on the given data dir (all of them or
 * only Redis, with the binary named by the second argument), writes one item to each, prints {@value #READY} and
 * waits to be killed.
 */
public final class CrashedOwner {

    static final String READY = "services ready";
    static final String TOPIC = "crash-check";
    static final String KEY = "fleetmq:crash-check";
    static final String VALUE = "written before the owner was killed";

    private CrashedOwner() {
    }

    /** Arguments: data dir, Redis binary, and {@code all} services or only {@code redis}. */
    public static void main(String[] args) throws Exception {
        boolean all = !"redis".equals(args[2]);
        Path dataDir = Path.of(args[0]);
        EmbeddedServicesConfig config = all
                ? EmbeddedServicesConfig.allOnLoopback(dataDir)
                : new EmbeddedServicesConfig(dataDir, EmbeddedServicesConfig.LOOPBACK, false, 0, 0, true, 0, false, 0);
        EmbeddedServices services = EmbeddedServices.start(config.withRedisBinary(RedisBinary.of(args[1])));

        RedisClient redis = RedisClient.create(services.redisUrl());
        try (StatefulRedisConnection<String, String> connection = redis.connect()) {
            connection.sync().set(KEY, VALUE);
        } finally {
            redis.shutdown(0, 5, TimeUnit.SECONDS);
        }
        if (all) {
            writeToKafkaAndPostgres(services);
        }

        System.out.println(READY);
        System.out.flush();
        new CountDownLatch(1).await();
    }

    private static void writeToKafkaAndPostgres(EmbeddedServices services) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, services.kafkaBootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
            producer.send(new ProducerRecord<>(TOPIC, KEY, VALUE)).get(30, TimeUnit.SECONDS);
        }
        try (Connection connection = DriverManager.getConnection(
                services.databaseUrl(), services.databaseUser(), services.databasePassword());
             Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE crash_check (body text NOT NULL)");
            statement.execute("INSERT INTO crash_check VALUES ('" + VALUE + "')");
        }
    }
}
