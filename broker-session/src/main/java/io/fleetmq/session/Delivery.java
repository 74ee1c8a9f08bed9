package io.fleetmq.session;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.subscription.Subscription;
import java.util.ArrayList;
import java.util.List;

/** A message on its way to one client, with the options of the subscriptions that matched. */
record Delivery(BrokerMessage message, int qos, boolean retain, List<Integer> subscriptionIds) {

    /** The one copy {@code clientId} gets of a message its subscriptions {@code matched}; null if none. */
    static Delivery of(String clientId, BrokerMessage message, List<Subscription> matched) {
        int qos = -1;
        boolean retain = false;
        List<Integer> ids = List.of();
        for (Subscription sub : matched) {
            if (sub.noLocal() && sub.shareGroup() == null && clientId.equals(message.publisherId())) {
                continue; // [MQTT-3.8.3-3]
            }
            // One copy at the highest QoS of the overlapping subscriptions, with all their identifiers [MQTT-3.3.4-2/3].
            qos = Math.max(qos, Math.min(message.qos(), sub.qos()));
            retain |= sub.retainAsPublished() && message.retain(); // [MQTT-3.3.1-12/13]
            if (sub.subscriptionId() > 0) {
                if (ids.isEmpty()) {
                    ids = new ArrayList<>(matched.size());
                }
                ids.add(sub.subscriptionId());
            }
        }
        if (qos < 0) {
            return null;
        }
        return new Delivery(message, qos, retain, ids);
    }
}
