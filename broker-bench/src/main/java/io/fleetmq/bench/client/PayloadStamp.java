package io.fleetmq.bench.client;

import io.netty.buffer.ByteBuf;

/**
 * The first {@value #SIZE} bytes of every benchmark payload, big-endian: the publisher's
 * {@link System#nanoTime()} when it built the message (8 bytes), the publisher ID (4) and the
 * publisher's sequence number (4). The rest of the payload is zeros.
 *
 * <p>Publishers and subscribers run in one JVM, so the subscriber's own {@code nanoTime()} minus the
 * stamp is the end-to-end latency without any clock synchronisation. The publisher ID and sequence
 * let the subscriber detect reordering and duplicates per publisher.
 *
 * @param sentNanos the publisher's {@code System.nanoTime()} at send
 * @param publisher the publisher ID from the topology
 * @param sequence  0, 1, 2, ... per publisher
 */
public record PayloadStamp(long sentNanos, int publisher, int sequence) {

    public static final int SIZE = Long.BYTES + Integer.BYTES + Integer.BYTES;

    /** Writes the stamp followed by zeros up to {@code payloadBytes} in total. */
    public void writeTo(ByteBuf buf, int payloadBytes) {
        if (payloadBytes < SIZE) {
            throw new IllegalArgumentException("payload of " + payloadBytes + " bytes cannot hold the " + SIZE
                    + "-byte stamp");
        }
        buf.writeLong(sentNanos).writeInt(publisher).writeInt(sequence).writeZero(payloadBytes - SIZE);
    }

    /** Whether a received payload can carry a stamp at all; anything shorter was not sent by this tool. */
    public static boolean fits(ByteBuf payload) {
        return payload.readableBytes() >= SIZE;
    }

    /** Reads the stamp without moving the buffer's reader index. */
    public static PayloadStamp readFrom(ByteBuf payload) {
        if (!fits(payload)) {
            throw new IllegalArgumentException("payload of " + payload.readableBytes() + " bytes has no stamp");
        }
        int at = payload.readerIndex();
        return new PayloadStamp(payload.getLong(at), payload.getInt(at + Long.BYTES),
                payload.getInt(at + Long.BYTES + Integer.BYTES));
    }
}
