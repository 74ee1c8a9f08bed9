package io.fleetmq.app.http;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.retained.LogPosition;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What the admin API needs of the node's message path for {@code /api/v1/retained} and
 * {@code /api/v1/publish}: the retained messages this node knows (every node holds the whole
 * cluster's), and the publish log every PUBLISH goes through. Implemented over the node's current
 * incarnation; a method throws {@link IllegalStateException} when the node cannot serve (fenced and
 * rejoining), which the API answers with 503.
 */
public interface RetainedMessages {

    /**
     * The limits an MQTT client's PUBLISH is held to on this node, which a published message meets too.
     *
     * @param maxPacketSize        mqtt.max-packet-size: bytes of the whole PUBLISH packet
     * @param maxTopicLength       bytes of a topic name (UTF-8)
     * @param maxTopicLevels       levels of a topic name
     * @param maxUserProperties    user properties of one packet
     * @param maxUserPropertyBytes bytes of the user properties of one packet, names and values
     */
    record Limits(int maxPacketSize, int maxTopicLength, int maxTopicLevels, int maxUserProperties,
                  int maxUserPropertyBytes) {
    }

    /** The retained messages of the topics {@code filter} (a valid topic filter) matches, in no order. */
    List<BrokerMessage> matching(String filter);

    /** The retained message of {@code topic}, or null. */
    BrokerMessage get(String topic);

    /**
     * Whether a retained change of {@code topic} this node acknowledged is not yet in the retained
     * log (it is shown already, see {@link #get}).
     */
    boolean isPending(String topic);

    /**
     * Appends {@code message} to the publish log, as a client's PUBLISH is: once stored it is
     * routed to the subscribers on every node, and a retained one (an empty payload: its deletion)
     * becomes the topic's retained message on every node. This node shows a retained change at once.
     *
     * @return completes with where the message was stored once Kafka has it; fails if it could not
     */
    CompletableFuture<LogPosition> publish(BrokerMessage message);

    /**
     * Why a retained {@code message} does not fit the cluster's bounds on retained messages
     * (mqtt.max-retained-messages, mqtt.max-retained-bytes), or null if it does.
     */
    String retainedRefusal(BrokerMessage message);

    Limits limits();

    /** Epoch millis now: the receive time of a published message, and the clock of expiry. */
    long now();
}
