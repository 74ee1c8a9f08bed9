package io.fleetmq.session;

import io.fleetmq.core.subscription.Subscription;
import java.util.List;

/**
 * What an operator sees of one session on this node (admin: inspect a session).
 *
 * @param epoch    the connect sequence's number of its current or last connection
 * @param inFlight QoS 1/2 messages sent and not yet acknowledged
 * @param queued   QoS 1/2 messages waiting in the session's memory for room in the client's window
 */
public record SessionView(String clientId, boolean online, long epoch, String clientType, long sessionExpirySeconds,
                          List<Subscription> subscriptions, int inFlight, int queued) {
}
