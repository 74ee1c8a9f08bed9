package io.fleetmq.transport.mqtt;

import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import io.netty.handler.codec.DecoderException;

/**
 * A packet {@link MqttPacketValidator} refused, with the reason code the connection ends with and,
 * when the packet was a CONNECT, the protocol version it asked for (so the answer fits the client).
 */
final class InvalidPacketException extends DecoderException {

    private static final long serialVersionUID = 1L;

    private final transient ReasonCode reasonCode;
    private final transient ProtocolVersion connectVersion;
    private final String limit;

    InvalidPacketException(ReasonCode reasonCode, String message, ProtocolVersion connectVersion) {
        this(reasonCode, message, connectVersion, null);
    }

    /** A packet beyond one of the node's limits, named as in {@code fleetmq_limit_exceeded_total}. */
    InvalidPacketException(ReasonCode reasonCode, String message, ProtocolVersion connectVersion, String limit) {
        super(message);
        this.reasonCode = reasonCode;
        this.connectVersion = connectVersion;
        this.limit = limit;
    }

    /** The limit the packet exceeded, or null for a packet that breaks the protocol. */
    String limit() {
        return limit;
    }

    ReasonCode reasonCode() {
        return reasonCode;
    }

    /** The version of the refused CONNECT, or null if the packet was not a CONNECT. */
    ProtocolVersion connectVersion() {
        return connectVersion;
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this; // an answer to bad input, not a bug: the stack says nothing
    }
}
