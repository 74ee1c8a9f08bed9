package io.fleetmq.core.mqtt;

/**
 * The client broke the protocol; the connection ends with {@link #reasonCode()} (sent in CONNACK or
 * DISCONNECT for MQTT 5, a plain close for older versions [MQTT-4.13.1-1]).
 */
public final class ProtocolViolation extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final ReasonCode reasonCode;

    public ProtocolViolation(ReasonCode reasonCode, String message) {
        super(message);
        this.reasonCode = reasonCode;
    }

    public ReasonCode reasonCode() {
        return reasonCode;
    }
}
