package io.fleetmq.bench.report;

import java.util.Locale;

/** How a fleet device's handshake (TCP, CONNECT, SUBSCRIBE) ended without the device being served. */
public enum FailureKind {
    TCP_FAILED("TCP connect failed"),
    CONNACK_REFUSED("CONNACK refused"),
    /** The broker closed (or reset) the connection before any CONNACK: a refusal without a reason code. */
    CLOSED_BEFORE_CONNACK("closed without any CONNACK"),
    CONNACK_TIMEOUT("no CONNACK in time"),
    SUBACK_REFUSED("SUBACK refused"),
    CLOSED_BEFORE_SUBACK("closed before SUBACK"),
    SUBACK_TIMEOUT("no SUBACK in time"),
    PROTOCOL_ERROR("protocol error");

    private final String label;

    FailureKind(String label) {
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
