package io.fleetmq.session;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.retained.RetainedIndex;

/**
 * The cluster-wide bounds on retained messages (mqtt.max-retained-messages and
 * mqtt.max-retained-bytes), applied to an incoming PUBLISH before it is stored. Every node's
 * retained index holds the whole cluster's retained messages, so the check is local.
 *
 * <p>A retained PUBLISH that would add a topic beyond the number bound, or grow the bytes beyond the
 * byte bound, is refused with Quota exceeded (0x97) where the publisher can be told: an MQTT 5
 * QoS 1/2 PUBLISH is answered with 0x97 and neither stored nor delivered. Where it cannot (MQTT
 * 3.1.1, and QoS 0), the message is delivered as usual but not retained. Both are counted in
 * {@code fleetmq_limit_exceeded_total{limit="retained_messages"|"retained_bytes"}}. Deleting a
 * retained message (empty payload) and replacing one without growing it always pass.
 */
public final class RetainedAdmission {

    /**
     * What becomes of the PUBLISH.
     *
     * @param message the message to store and route: the original, or a copy with RETAIN cleared
     * @param refusal why it is refused with 0x97, or {@code null} if it goes on
     */
    public record Decision(BrokerMessage message, String refusal) {
        public boolean refused() {
            return refusal != null;
        }
    }

    private RetainedAdmission() {
    }

    /**
     * @param canRefuse whether the publisher can be answered with a reason code (MQTT 5, QoS 1/2)
     */
    public static Decision admit(SessionServices services, BrokerMessage message, boolean canRefuse) {
        if (!message.retain() || message.payload().length == 0) {
            return new Decision(message, null);
        }
        RetainedIndex<BrokerMessage> index = services.retained();
        RetainedIndex.Room room = index.room(message.topic(), message);
        if (room == RetainedIndex.Room.FITS) {
            return new Decision(message, null);
        }
        boolean messages = room == RetainedIndex.Room.MESSAGES_EXCEEDED;
        LimitsExceeded.count(services.meters(),
                messages ? LimitsExceeded.RETAINED_MESSAGES : LimitsExceeded.RETAINED_BYTES);
        if (canRefuse) {
            return new Decision(message, messages ? "the broker holds its maximum number of retained messages"
                    : "the broker holds its maximum bytes of retained messages");
        }
        return new Decision(withoutRetain(message), null);
    }

    private static BrokerMessage withoutRetain(BrokerMessage m) {
        return new BrokerMessage(m.topic(), m.payload(), m.qos(), false, m.publisherId(), m.createdAtMillis(),
                m.expiryIntervalSeconds(), m.payloadFormat(), m.contentType(), m.responseTopic(), m.correlationData(),
                m.userProperties());
    }
}
