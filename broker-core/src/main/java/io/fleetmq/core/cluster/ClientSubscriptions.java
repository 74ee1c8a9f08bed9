package io.fleetmq.core.cluster;

import io.fleetmq.core.subscription.Subscription;
import java.util.List;
import java.util.Objects;

/**
 * All subscriptions of one session: its record in the compacted {@code subscriptions} topic, keyed
 * by client ID, rewritten whole on every change by the node holding the session.
 *
 * @param nodeId        the node holding the session, which wrote the record
 * @param incarnation   that node's incarnation; a node skips its own records of the same incarnation,
 *                      since it applied them before writing them
 * @param subscriptions every subscription, each naming {@code nodeId} as its node
 */
public record ClientSubscriptions(String clientId, String nodeId, long incarnation, List<Subscription> subscriptions) {

    public ClientSubscriptions {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(nodeId, "nodeId");
        subscriptions = List.copyOf(subscriptions);
    }
}
