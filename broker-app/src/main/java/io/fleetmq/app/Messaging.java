package io.fleetmq.app;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.retained.RetainedIndex;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.publish.PublishConsumer;
import io.fleetmq.kafka.publish.PublishLog;
import io.fleetmq.kafka.publish.PublishedRecord;
import io.fleetmq.kafka.retained.RetainedStore;
import io.fleetmq.session.MessageDrops;
import io.fleetmq.session.SessionActor;
import io.fleetmq.session.SessionRegistry;
import io.fleetmq.session.SessionServices;
import io.fleetmq.session.delivery.LocalRouter;
import io.fleetmq.transport.mqtt.MqttConnectionHandler;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The message path of a node, wired by constructors: the publish log clients write to, the
 * consumer that routes what Kafka stored to the sessions here, retained messages, and the actors
 * of the sessions.
 */
final class Messaging implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Messaging.class);

    private final BrokerConfig config;
    private final ExecutorService actorPool;
    private final ScheduledThreadPoolExecutor timers;
    private final PublishLog publishLog;
    private final RetainedStore retainedStore;
    private final SessionRegistry sessions;
    private final PublishConsumer consumer;

    Messaging(BrokerConfig config, KafkaClients kafka, MeterRegistry meters) {
        this.config = config;
        // Actors run on a work-stealing pool sized to the cores: a mailbox is a short task, and
        // async mode keeps the tasks of many mailboxes in FIFO order.
        this.actorPool = new ForkJoinPool(Runtime.getRuntime().availableProcessors(),
                pool -> {
                    var t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
                    t.setName("fleetmq-actor-" + t.getPoolIndex());
                    return t;
                }, null, true);
        this.timers = new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("fleetmq-timer", true));
        timers.setRemoveOnCancelPolicy(true);

        MessageDrops drops = new MessageDrops(meters);
        SubscriptionTrie subscriptions = new SubscriptionTrie();
        RetainedIndex<BrokerMessage> retained = new RetainedIndex<>();
        this.publishLog = new PublishLog(kafka, meters);
        this.retainedStore = new RetainedStore(kafka, meters);
        SessionServices services = new SessionServices(config.nodeId(), config.mqttLimits(), publishLog,
                retainedStore, subscriptions, retained, actorPool, timers, meters, drops, System::currentTimeMillis);
        this.sessions = new SessionRegistry(services);
        LocalRouter router = new LocalRouter(subscriptions, sessions, drops);

        // The retained index must be complete before the node takes clients.
        retainedStore.loadAndFollow((topic, message) -> {
            if (message == null) {
                retained.remove(topic);
            } else {
                retained.put(topic, message);
            }
        });
        this.consumer = new PublishConsumer(kafka, meters, record -> route(record, router));
        consumer.start();

        Gauge.builder("fleetmq.sessions", sessions, SessionRegistry::size)
                .description("Sessions on this node, connected or not").register(meters);
        Gauge.builder("fleetmq.subscriptions", subscriptions, SubscriptionTrie::size)
                .description("Subscriptions in the node's trie").register(meters);
        Gauge.builder("fleetmq.retained.messages", retained, RetainedIndex::size)
                .description("Retained messages known to the node").register(meters);
    }

    private void route(PublishedRecord record, LocalRouter router) {
        BrokerMessage message = record.message();
        if (message.retain()) {
            // [MQTT-3.3.1-5..7] a retained PUBLISH replaces the topic's retained message; an empty
            // payload removes it. Waiting keeps the order with later publishes to the same topic.
            if (message.payload().length == 0) {
                retainedStore.delete(message.topic()).join();
            } else {
                retainedStore.put(message).join();
            }
        }
        router.route(message);
    }

    Supplier<ChannelHandler> connectionHandlers() {
        return () -> new MqttConnectionHandler(sessions, config.connectTimeoutSeconds(),
                config.mqttLimits().receiveMaximum());
    }

    SessionRegistry sessions() {
        return sessions;
    }

    /**
     * Graceful stop: every connected client is told the server is shutting down (0x8B for MQTT 5)
     * and disconnected, then the consumer stops and the publish log flushes what is in flight.
     */
    @Override
    public void close() {
        sessions.shutdown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (sessions.all().stream().anyMatch(SessionActor::isOnline) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        consumer.close();
        publishLog.close(Duration.ofSeconds(10));
        retainedStore.close();
        timers.shutdownNow();
        actorPool.shutdown();
        try {
            if (!actorPool.awaitTermination(5, TimeUnit.SECONDS)) {
                log.warn("Session actors still busy after 5 s; stopping them");
                actorPool.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
