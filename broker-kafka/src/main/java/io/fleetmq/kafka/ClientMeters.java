package io.fleetmq.kafka;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka clients' own metrics ({@code kafka_producer_*}, {@code kafka_consumer_*}, tag
 * {@code client_id} such as {@code fleetmq-<node>-publish}) through Micrometer's binder, for the
 * node's long-lived clients. A client's meters go when it closes.
 *
 * <p>A client is replaced by one with the same {@code client.id} when the node fences itself or a
 * loop restarts, and the old one may close after the new one started. Meters are identified by
 * name and tags, so only the newest client of an id is bound: binding it unbinds the older one, and
 * closing the older one later leaves the newer one's meters alone. The binders share one refresh
 * thread.
 */
final class ClientMeters implements AutoCloseable {

    private final MeterRegistry registry;
    private final ScheduledExecutorService refresher = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fleetmq-kafka-meters");
        t.setDaemon(true);
        return t;
    });
    private final ConcurrentHashMap<String, KafkaClientMetrics> bound = new ConcurrentHashMap<>();

    ClientMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    KafkaProducer<String, byte[]> producer(Properties props, String clientId) {
        return new Producer(props, clientId);
    }

    KafkaConsumer<String, byte[]> consumer(Properties props, String clientId) {
        return new Consumer(props, clientId);
    }

    private synchronized KafkaClientMetrics bind(String clientId, KafkaClientMetrics binder) {
        KafkaClientMetrics older = bound.put(clientId, binder);
        if (older != null) {
            older.close(); // removes the meters of this id; the newer client's are bound next
        }
        binder.bindTo(registry);
        return binder;
    }

    private synchronized void unbind(String clientId, KafkaClientMetrics binder) {
        if (bound.remove(clientId, binder)) {
            binder.close();
        }
    }

    /** Stops the refresh thread; the clients' meters stay until the clients close. */
    @Override
    public void close() {
        refresher.shutdownNow();
    }

    private final class Producer extends KafkaProducer<String, byte[]> {
        private final String clientId;
        private final KafkaClientMetrics binder;

        Producer(Properties props, String clientId) {
            super(props, new StringSerializer(), new ByteArraySerializer());
            this.clientId = clientId;
            this.binder = bind(clientId, new KafkaClientMetrics(this, List.of(), refresher));
        }

        @Override
        public void close() {
            try {
                super.close();
            } finally {
                unbind(clientId, binder);
            }
        }

        @Override
        public void close(Duration timeout) {
            try {
                super.close(timeout);
            } finally {
                unbind(clientId, binder);
            }
        }
    }

    private final class Consumer extends KafkaConsumer<String, byte[]> {
        private final String clientId;
        private final KafkaClientMetrics binder;

        Consumer(Properties props, String clientId) {
            super(props, new StringDeserializer(), new ByteArrayDeserializer());
            this.clientId = clientId;
            this.binder = bind(clientId, new KafkaClientMetrics(this, List.of(), refresher));
        }

        @Override
        public void close() {
            try {
                super.close();
            } finally {
                unbind(clientId, binder);
            }
        }

        @Override
        @SuppressWarnings("deprecation")
        public void close(Duration timeout) {
            try {
                super.close(timeout);
            } finally {
                unbind(clientId, binder);
            }
        }

        @Override
        public void close(CloseOptions options) {
            try {
                super.close(options);
            } finally {
                unbind(clientId, binder);
            }
        }
    }
}
