package io.fleetmq.bench.report;

import java.util.Locale;

/** Everything that went wrong, by kind. Each is counted; none is ever dropped silently. */
public enum ErrorKind {
    CONNECT_FAILED("connect failures"),
    SUBSCRIBE_FAILED("subscribe failures"),
    /** A connection that ended before the tool closed it, whatever the cause (which is counted too). */
    DISCONNECTED("disconnects"),
    IO_ERROR("I/O errors"),
    PROTOCOL_ERROR("protocol errors"),
    /** A PUBACK or PUBREC with a failure reason code (0x80 and above, MQTT 5). */
    PUBLISH_REJECTED("rejected publishes"),
    /** A delivery this run did not send: too short for a stamp, or from an unknown publisher. */
    UNEXPECTED_MESSAGE("unexpected messages");

    private final String label;

    ErrorKind(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** snake_case key for the JSON line. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }
}
