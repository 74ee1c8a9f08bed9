package io.fleetmq.session;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.retained.RetainedIndex;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.kafka.app.AppBacklogs;
import io.fleetmq.kafka.publish.PublishLog;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.persistence.redis.Qos2Receipts;
import io.fleetmq.session.cluster.ClientTypes;
import io.fleetmq.kafka.retained.RetainedStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;

/**
 * What every session actor of a node shares: the node's identity and limits, the publish log, the
 * replicated subscription trie and retained index, the actor thread pool and timers, meters, and
 * the link to the rest of the cluster, the DEVICE queues and QoS 2 receipts in Redis (null where there are none) and the
 * rule telling DEVICE from APPLICATION clients, and the node's {@link DeliveryBackpressure}.
 */
public record SessionServices(String nodeId, MqttLimits limits, PublishPort publishLog, RetainedStore retainedStore,
                              SubscriptionTrie subscriptions, RetainedIndex<BrokerMessage> retained,
                              Executor actorPool, ScheduledExecutorService timers, MeterRegistry meters,
                              MessageDrops drops, LongSupplier clock, ClusterPort cluster,
                              DeviceQueueStore deviceQueues, ClientTypes clientTypes, AppBacklogStore appBacklogs,
                              Qos2Receipts qos2Receipts, SessionGuard guard, DeliveryBackpressure backpressure) {

    public SessionServices {
        if (backpressure == null) {
            backpressure = DeliveryBackpressure.OFF;
        }
    }

    /** Without backpressure. */
    public SessionServices(String nodeId, MqttLimits limits, PublishPort publishLog, RetainedStore retainedStore,
                           SubscriptionTrie subscriptions, RetainedIndex<BrokerMessage> retained,
                           Executor actorPool, ScheduledExecutorService timers, MeterRegistry meters,
                           MessageDrops drops, LongSupplier clock, ClusterPort cluster,
                           DeviceQueueStore deviceQueues, ClientTypes clientTypes, AppBacklogStore appBacklogs,
                           Qos2Receipts qos2Receipts, SessionGuard guard) {
        this(nodeId, limits, publishLog, retainedStore, subscriptions, retained, actorPool, timers, meters, drops,
                clock, cluster, deviceQueues, clientTypes, appBacklogs, qos2Receipts, guard, DeliveryBackpressure.OFF);
    }

    /** Without security: every client connects and may do everything. */
    public SessionServices(String nodeId, MqttLimits limits, PublishPort publishLog, RetainedStore retainedStore,
                           SubscriptionTrie subscriptions, RetainedIndex<BrokerMessage> retained,
                           Executor actorPool, ScheduledExecutorService timers, MeterRegistry meters,
                           MessageDrops drops, LongSupplier clock, ClusterPort cluster,
                           DeviceQueueStore deviceQueues, ClientTypes clientTypes, AppBacklogStore appBacklogs,
                           Qos2Receipts qos2Receipts) {
        this(nodeId, limits, publishLog, retainedStore, subscriptions, retained, actorPool, timers, meters, drops,
                clock, cluster, deviceQueues, clientTypes, appBacklogs, qos2Receipts, SessionGuard.ALLOW_ALL);
    }

    /** Over Kafka and Redis, as a node runs. */
    public SessionServices(String nodeId, MqttLimits limits, PublishLog publishLog, RetainedStore retainedStore,
                           SubscriptionTrie subscriptions, RetainedIndex<BrokerMessage> retained,
                           Executor actorPool, ScheduledExecutorService timers, MeterRegistry meters,
                           MessageDrops drops, LongSupplier clock, ClusterPort cluster,
                           DeviceQueues deviceQueues, ClientTypes clientTypes, AppBacklogs appBacklogs,
                           Qos2Receipts qos2Receipts, SessionGuard guard, DeliveryBackpressure backpressure) {
        this(nodeId, limits, PublishPort.of(publishLog), retainedStore, subscriptions, retained, actorPool, timers,
                meters, drops, clock, cluster, DeviceQueueStore.of(deviceQueues), clientTypes,
                AppBacklogStore.of(appBacklogs), qos2Receipts, guard, backpressure);
    }
}
