package io.fleetmq.bench.client;

import io.netty.handler.codec.mqtt.MqttPublishMessage;

/**
 * What a connection does once it is up: publish (with its own pacing and in-flight window) or
 * receive. {@link MqttConnection} handles the protocol (CONNECT, SUBSCRIBE, the QoS 1 and 2
 * handshakes, keep-alive) and calls these on the connection's event loop, never concurrently.
 */
public interface ClientRole {

    /** An incoming PUBLISH; its acknowledgement is sent by the connection after this returns. */
    default void onPublish(MqttPublishMessage message, long receivedNanos) {
    }

    /** The end of our QoS 1 (PUBACK) or QoS 2 (PUBCOMP) flow for one of our publishes. */
    default void onPublishCompleted(int packetId, long nowNanos) {
    }

    /** A PUBACK or PUBREC with a failure reason code: the flow ends there, the packet ID is free. */
    default void onPublishRejected(int packetId, int reasonCode) {
    }

    /** The end of one batch of reads: a good moment to write, since the connection flushes next. */
    default void onReadComplete() {
    }

    /** The outbound buffer drained below its low-water mark again. */
    default void onWritable() {
    }

    /** The channel closed, for whatever reason. */
    default void onClosed() {
    }
}
