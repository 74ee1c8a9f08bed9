package io.fleetmq.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.message.UserProperty;
import io.fleetmq.core.subscription.Subscription;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RecordLimitsTest {

    private static final RecordLimits DEFAULT = new RecordLimits(RecordLimits.DEFAULT_MAX_PACKET_SIZE);

    private static String repeat(char c, int n) {
        return String.valueOf(c).repeat(n);
    }

    /**
     * The worst envelope: a PUBLISH of exactly the packet limit from a client with the longest client
     * ID MQTT allows, delivered to one subscription whose every string is as long as MQTT allows.
     */
    @Test
    void aDownlinkOfAMaximumPacketWithTheLongestIdsFitsARecord() {
        String topic = "t/" + repeat('x', 100);
        // The PUBLISH: fixed header (1 + 4 length bytes), topic (2 + length), packet id (2),
        // properties length (1), payload: exactly the packet limit in all.
        int payload = RecordLimits.DEFAULT_MAX_PACKET_SIZE - 1 - 4 - (2 + topic.length()) - 2 - 1;
        byte[] bytes = new byte[payload];
        new Random(1).nextBytes(bytes);
        BrokerMessage message = BrokerMessage.of(topic, bytes, 1, true, repeat('p', 65_535), Long.MAX_VALUE / 2);
        // A shared subscription's "$share/<group>/<filter>" is one MQTT string: the two share 65,535 bytes.
        Subscription longest = new Subscription(repeat('c', 65_535), repeat('f', 32_000), repeat('g', 32_000), 1,
                false, false, 0, 268_435_455, repeat('n', 100));
        byte[] record = ClusterCodec.encode(new Downlink(Integer.MAX_VALUE, Long.MAX_VALUE, message,
                List.of(longest), Integer.MAX_VALUE));

        assertTrue(record.length <= DEFAULT.maxDownlinkValueBytes(),
                record.length + " bytes > " + DEFAULT.maxDownlinkValueBytes());
        assertTrue(DEFAULT.maxDownlinkValueBytes() + RecordLimits.KEY_AND_HEADERS <= DEFAULT.maxRecordBytes());
    }

    /** MessageCodec's lengths are never longer than MQTT's own for the same fields. */
    @Test
    void manySmallPropertiesCostNoMoreThanInTheMqttPacket() {
        List<UserProperty> props = new ArrayList<>();
        int mqttPropertyBytes = 0;
        while (mqttPropertyBytes < RecordLimits.DEFAULT_MAX_PACKET_SIZE - 100) {
            props.add(new UserProperty("a", "b"));
            mqttPropertyBytes += 1 + 2 + 1 + 2 + 1; // id, name length and byte, value length and byte
        }
        BrokerMessage message = new BrokerMessage("t", new byte[0], 1, false, "p", 0, BrokerMessage.NO_EXPIRY,
                BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null, props);
        int encoded = MessageCodec.encode(message).length;
        assertTrue(encoded <= mqttPropertyBytes + RecordLimits.MESSAGE_OVERHEAD, encoded + " bytes");
    }

    @Test
    void theTopicLimitLeavesRoomForCompressionToGrowIncompressibleData() {
        int record = DEFAULT.maxRecordBytes();
        assertTrue(record > RecordLimits.DEFAULT_MAX_PACKET_SIZE + RecordLimits.MESSAGE_OVERHEAD);
        // lz4's worst case is n + n/255 + 16 bytes.
        assertTrue(DEFAULT.topicMaxMessageBytes() >= record + record / 255 + 16);
        // Kafka's default limit (1 MiB + 12) is too small for a default packet: the reason for all this.
        assertTrue(DEFAULT.topicMaxMessageBytes() > 1_048_588);
    }

    @Test
    void growsWithThePacketLimitAndNeverOverflows() {
        assertEquals(DEFAULT.maxRecordBytes() + 1_000_000,
                new RecordLimits(RecordLimits.DEFAULT_MAX_PACKET_SIZE + 1_000_000).maxRecordBytes());
        RecordLimits largest = new RecordLimits(268_435_455);
        assertTrue(largest.topicMaxMessageBytes() > largest.maxRecordBytes());
        assertThrows(IllegalArgumentException.class, () -> new RecordLimits(0));
    }
}
