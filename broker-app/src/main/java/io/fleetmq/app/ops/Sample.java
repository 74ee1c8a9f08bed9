package io.fleetmq.app.ops;

import java.util.Map;

/**
 * What one node did during one sample interval, and its size at the end of it: the unit of the
 * statistics the admin API charts. Counts are of the interval alone, so a chart plots them as they
 * are and a total is a sum.
 *
 * @param atMillis      the end of the interval, a multiple of the interval on the wall clock (so
 *                      the samples of all nodes line up)
 * @param messagesIn    PUBLISH messages received from clients
 * @param messagesOut   PUBLISH messages sent to clients
 * @param bytesIn       payload bytes received
 * @param bytesOut      payload bytes sent
 * @param dropped       messages dropped, all reasons
 * @param drops         messages dropped by reason (reasons without drops left out)
 * @param connections   clients connected at the end of the interval
 * @param sessions      sessions on the node, connected or not
 * @param subscriptions subscriptions of the node's sessions
 */
public record Sample(long atMillis, long messagesIn, long messagesOut, long bytesIn, long bytesOut, long dropped,
        Map<String, Long> drops, long connections, long sessions, long subscriptions) {

    public Sample {
        drops = drops == null ? Map.of() : Map.copyOf(drops);
    }
}
