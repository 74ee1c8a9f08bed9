package io.fleetmq.session;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The PUBLISH messages a node takes from its clients and sends to them, and their payload bytes:
 * {@code fleetmq_messages_received_total}, {@code fleetmq_messages_sent_total},
 * {@code fleetmq_bytes_received_total} and {@code fleetmq_bytes_sent_total}, each by tag
 * {@code qos} (0, 1 or 2). The counters are looked up once per registry and shared by every
 * session of the node, so counting a message is an array index and two adder increments, and a new
 * session costs neither lookups nor memory for them.
 */
final class Traffic {

    static final String MESSAGES_RECEIVED = "fleetmq.messages.received";
    static final String MESSAGES_SENT = "fleetmq.messages.sent";
    static final String BYTES_RECEIVED = "fleetmq.bytes.received";
    static final String BYTES_SENT = "fleetmq.bytes.sent";

    /** Received and sent, per registry (one per node; weak, as tests make many). */
    private static final java.util.Map<MeterRegistry, Traffic[]> SHARED =
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    private final Counter[] messages = new Counter[3];
    private final Counter[] bytes = new Counter[3];

    private Traffic(MeterRegistry meters, String messagesName, String messagesHelp, String bytesName,
            String bytesHelp) {
        for (int qos = 0; qos < 3; qos++) {
            String tag = Integer.toString(qos);
            messages[qos] = Counter.builder(messagesName).description(messagesHelp).tag("qos", tag).register(meters);
            bytes[qos] = Counter.builder(bytesName).description(bytesHelp).tag("qos", tag).register(meters);
        }
    }

    /** PUBLISH packets clients sent to the node and it accepted for storing. */
    static Traffic received(MeterRegistry meters) {
        return of(meters)[0];
    }

    /** PUBLISH packets the node wrote to its clients. */
    static Traffic sent(MeterRegistry meters) {
        return of(meters)[1];
    }

    private static Traffic[] of(MeterRegistry meters) {
        return SHARED.computeIfAbsent(meters, m -> new Traffic[] {createReceived(m), createSent(m)});
    }

    private static Traffic createReceived(MeterRegistry meters) {
        return new Traffic(meters, MESSAGES_RECEIVED, "PUBLISH messages received from clients", BYTES_RECEIVED,
                "Payload bytes of the PUBLISH messages received from clients");
    }

    private static Traffic createSent(MeterRegistry meters) {
        return new Traffic(meters, MESSAGES_SENT, "PUBLISH messages sent to clients", BYTES_SENT,
                "Payload bytes of the PUBLISH messages sent to clients");
    }

    /** Counts one PUBLISH of {@code qos} (0 to 2, as the packet carries it). */
    void count(int qos, int payloadBytes) {
        messages[qos].increment();
        bytes[qos].increment(payloadBytes);
    }
}
