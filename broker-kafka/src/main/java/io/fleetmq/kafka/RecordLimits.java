package io.fleetmq.kafka;

/**
 * How large a Kafka record of the broker may be, derived from the largest MQTT packet it accepts
 * ({@code mqtt.max-packet-size}).
 *
 * <p>Kafka's default limit (1 MiB) equals the default MQTT packet limit, yet every record carries
 * more than the packet's bytes: the encoded message adds the publisher's client ID and a few
 * fields the PUBLISH does not hold, a downlink adds matched subscriptions, and Kafka adds its batch
 * and record headers. A PUBLISH near the packet limit would then be refused by Kafka, and no
 * publisher would ever get its acknowledgement. So the limit is the packet limit plus a bound on
 * everything the broker puts around a packet:
 *
 * <ul>
 *   <li>{@link #MESSAGE_OVERHEAD}: {@code MessageCodec} writes each field of the PUBLISH with a
 *       length no longer than MQTT's own (a varint against a property byte and a two-byte length),
 *       plus a version and flags byte, the creation time, a length for the payload, and the
 *       publisher's client ID, which is not part of the PUBLISH and may be 65,535 bytes;</li>
 *   <li>{@link #ONE_SUBSCRIPTION}: a downlink record carries at least one matched subscription,
 *       whose client ID, filter and share group may each be 65,535 bytes; records with more are
 *       split below the limit ({@code ClusterCodec.split});</li>
 *   <li>{@link #KEY_AND_HEADERS}: the record key (a client ID or a topic name, each at most 65,535
 *       bytes) and the headers of a dead-letter record;</li>
 *   <li>{@link #KAFKA_BATCH_OVERHEAD}: the record batch header (61 bytes) and one record's
 *       framing.</li>
 * </ul>
 *
 * Kafka checks a topic's {@code max.message.bytes} against the batch as stored, compressed: lz4 can
 * make incompressible data slightly larger (at most 1/255 plus a few bytes), so the topic limit
 * {@link #topicMaxMessageBytes()} sits above what producers may send ({@link #maxRecordBytes()}).
 *
 * @param maxPacketSize {@code mqtt.max-packet-size}: the largest MQTT packet a client may send
 */
public record RecordLimits(int maxPacketSize) {

    /** The default of {@code mqtt.max-packet-size}: 1 MiB. */
    public static final int DEFAULT_MAX_PACKET_SIZE = 1_048_576;

    /** What {@code MessageCodec} may add to the bytes of a PUBLISH packet. */
    public static final int MESSAGE_OVERHEAD = 2 + 9 + 5 + (3 + 65_535);
    /** A downlink record's header (type, source partition and offset, part, counts) and one subscription. */
    public static final int ONE_SUBSCRIPTION = 32 + 3 * (4 + 65_535) + 1 + 4 + (4 + 249);
    /** The record key and the headers the broker writes. */
    public static final int KEY_AND_HEADERS = (5 + 65_535) + 8_192;
    /** Kafka's record batch header and one record's length, attributes, deltas and counts. */
    public static final int KAFKA_BATCH_OVERHEAD = 61 + 64;

    public RecordLimits {
        if (maxPacketSize < 1) {
            throw new IllegalArgumentException("maximum packet size must be positive, was " + maxPacketSize);
        }
    }

    /**
     * The largest record a producer of the broker may send, uncompressed: {@code max.request.size}.
     * Also what a downlink record is split below.
     */
    public int maxRecordBytes() {
        return (int) Math.min(Integer.MAX_VALUE - 1,
                (long) maxPacketSize + MESSAGE_OVERHEAD + ONE_SUBSCRIPTION + KEY_AND_HEADERS + KAFKA_BATCH_OVERHEAD);
    }

    /**
     * The {@code max.message.bytes} every topic of the broker needs: {@link #maxRecordBytes()} plus
     * what lz4 may add to incompressible data. Consumers fetch up to this much per partition.
     */
    public int topicMaxMessageBytes() {
        long record = maxRecordBytes();
        return (int) Math.min(Integer.MAX_VALUE - 1, record + record / 255 + 1_024);
    }

    /**
     * The most a downlink record's value may hold: what a record may weigh, less its key and
     * headers and Kafka's framing.
     */
    public int maxDownlinkValueBytes() {
        return maxRecordBytes() - KEY_AND_HEADERS - KAFKA_BATCH_OVERHEAD;
    }
}
