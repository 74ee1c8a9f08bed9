package io.fleetmq.session;

import io.fleetmq.core.message.UserProperty;
import io.fleetmq.core.mqtt.Packet;
import java.nio.charset.StandardCharsets;

/**
 * Encoded sizes of outgoing packets, to honour the client's Maximum Packet Size without encoding
 * twice. Exact for the fields the broker sends; a test checks it against the real encoder.
 */
final class PacketSizes {

    private PacketSizes() {
    }

    static long publish(Packet.Publish p, boolean v5) {
        long variable = utf8(p.topic()) + (p.qos() > 0 ? 2 : 0);
        if (v5) {
            long props = 0;
            if (p.messageExpirySeconds() >= 0) {
                props += 1 + 4;
            }
            if (p.payloadFormat() >= 0) {
                props += 1 + 1;
            }
            if (p.contentType() != null) {
                props += 1 + utf8(p.contentType());
            }
            if (p.responseTopic() != null) {
                props += 1 + utf8(p.responseTopic());
            }
            if (p.correlationData() != null) {
                props += 1 + 2 + p.correlationData().length;
            }
            if (p.topicAlias() > 0) {
                props += 1 + 2;
            }
            for (int id : p.subscriptionIds()) {
                props += 1 + varIntSize(id);
            }
            for (UserProperty u : p.userProperties()) {
                props += 1 + utf8(u.name()) + utf8(u.value());
            }
            variable += varIntSize(props) + props;
        }
        long remaining = variable + p.payload().length;
        return 1 + varIntSize(remaining) + remaining;
    }

    private static long utf8(String s) {
        return 2 + s.getBytes(StandardCharsets.UTF_8).length;
    }

    static int varIntSize(long value) {
        if (value < 128) {
            return 1;
        }
        if (value < 16_384) {
            return 2;
        }
        if (value < 2_097_152) {
            return 3;
        }
        return 4;
    }
}
