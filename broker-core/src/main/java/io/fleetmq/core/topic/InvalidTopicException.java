package io.fleetmq.core.topic;

/**
 * A topic name or topic filter that breaks the rules of MQTT 5.0 section 4.7 or 4.8.2. The
 * message says which rule, so it can go into a reason string or an HTTP 400 unchanged; the
 * reason code says how the packet that carried it is answered.
 */
public final class InvalidTopicException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** MQTT 5 reason code 0x8F, the answer to a SUBSCRIBE or UNSUBSCRIBE with a bad filter. */
    public static final int TOPIC_FILTER_INVALID = 0x8F;

    /** MQTT 5 reason code 0x90, the answer to a PUBLISH (or will) with a bad topic name. */
    public static final int TOPIC_NAME_INVALID = 0x90;

    private final int reasonCode;

    public InvalidTopicException(int reasonCode, String message) {
        super(message);
        this.reasonCode = reasonCode;
    }

    /** {@link #TOPIC_FILTER_INVALID} or {@link #TOPIC_NAME_INVALID}. */
    public int reasonCode() {
        return reasonCode;
    }
}
