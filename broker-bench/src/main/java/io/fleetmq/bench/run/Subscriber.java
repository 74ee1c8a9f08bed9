package io.fleetmq.bench.run;

import io.fleetmq.bench.client.ClientRole;
import io.fleetmq.bench.client.PayloadStamp;
import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.scenario.Topology;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import java.util.Arrays;

/**
 * Counts deliveries, records their end-to-end latency, and checks per-publisher order: MQTT keeps
 * the order of messages from one publisher on one topic at one QoS (MQTT 5 section 4.6), so a
 * sequence number that does not rise means a duplicate or a reordering. Event loop only.
 */
final class Subscriber implements ClientRole {

    private final Topology.Subscriber spec;
    private final RunStats stats;
    private final int[] lastSequence;

    Subscriber(Topology.Subscriber spec, int publishers, RunStats stats) {
        this.spec = spec;
        this.stats = stats;
        this.lastSequence = new int[publishers];
        Arrays.fill(lastSequence, -1);
    }

    Topology.Subscriber spec() {
        return spec;
    }

    @Override
    public void onPublish(MqttPublishMessage message, long receivedNanos) {
        ByteBuf payload = message.payload();
        if (!PayloadStamp.fits(payload)) {
            unexpected(message, payload.readableBytes() + "-byte payload");
            return;
        }
        PayloadStamp stamp = PayloadStamp.readFrom(payload);
        int publisher = stamp.publisher();
        if (publisher < 0 || publisher >= lastSequence.length) {
            unexpected(message, "unknown publisher " + publisher);
            return;
        }
        stats.delivered(stamp.sentNanos(), receivedNanos);
        if (stamp.sequence() > lastSequence[publisher]) {
            lastSequence[publisher] = stamp.sequence();
        } else {
            stats.reordered();
        }
    }

    private void unexpected(MqttPublishMessage message, String what) {
        stats.error(ErrorKind.UNEXPECTED_MESSAGE, spec.clientId() + ": " + what + " on "
                + message.variableHeader().topicName());
    }
}
