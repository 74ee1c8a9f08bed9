package io.fleetmq.session;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The PUBLISH messages a node takes from its clients and sends to them, and their payload bytes:
 * {@code fleetmq_messages_received_total}, {@code fleetmq_messages_sent_total},
 * {@code fleetmq_bytes_received_total} and {@code fleetmq_bytes_sent_total}. Each flow looks its
 * counters up once, so counting a message is two adder increments.
 */
final class Traffic {

    static final String MESSAGES_RECEIVED = "fleetmq.messages.received";
    static final String MESSAGES_SENT = "fleetmq.messages.sent";
    static final String BYTES_RECEIVED = "fleetmq.bytes.received";
    static final String BYTES_SENT = "fleetmq.bytes.sent";

    private final Counter messages;
    private final Counter bytes;

    private Traffic(Counter messages, Counter bytes) {
        this.messages = messages;
        this.bytes = bytes;
    }

    /** PUBLISH packets clients sent to the node and it accepted for storing. */
    static Traffic received(MeterRegistry meters) {
        return new Traffic(Counter.builder(MESSAGES_RECEIVED).description("PUBLISH messages received from clients")
                .register(meters), Counter.builder(BYTES_RECEIVED)
                .description("Payload bytes of the PUBLISH messages received from clients").register(meters));
    }

    /** PUBLISH packets the node wrote to its clients. */
    static Traffic sent(MeterRegistry meters) {
        return new Traffic(Counter.builder(MESSAGES_SENT).description("PUBLISH messages sent to clients")
                .register(meters), Counter.builder(BYTES_SENT)
                .description("Payload bytes of the PUBLISH messages sent to clients").register(meters));
    }

    void count(int payloadBytes) {
        messages.increment();
        bytes.increment(payloadBytes);
    }
}
