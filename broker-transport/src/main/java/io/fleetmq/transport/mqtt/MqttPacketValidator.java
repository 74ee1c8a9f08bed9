package io.fleetmq.transport.mqtt;

import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.transport.limits.ConnectionLimits;
import io.fleetmq.transport.limits.NodeLimits;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.mqtt.MqttMessage;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Cuts the byte stream into whole MQTT packets and checks each one before Netty's decoder sees it,
 * for the rules that decoder does not enforce:
 * <ul>
 *   <li>every field stays inside the packet's Remaining Length: Netty's decoder would wait for the
 *       missing bytes and take them from the next packet, so a short Remaining Length is answered
 *       with 0x81 here instead of a stalled connection;</li>
 *   <li>properties: only those the packet type allows (2.2.2.2, else 0x81), none of those that may
 *       appear once appearing twice ("It is a Protocol Error to include ... more than once", 0x82),
 *       value ranges the specification names as protocol errors (0x82);</li>
 *   <li>UTF-8 strings well-formed and without U+0000 [MQTT-1.5.4-1] [MQTT-1.5.4-2] (0x81);</li>
 *   <li>CONNECT will flags [MQTT-3.1.2-11] [MQTT-3.1.2-12], a 3.1.1 password without a user name
 *       [MQTT-3.1.2-22], subscription options' reserved bits
 *       [MQTT-3.8.3-5], Retain Handling 3 and Maximum QoS 3;</li>
 *   <li>the broker's maximum packet size, before the packet is buffered (0x95);</li>
 *   <li>the node's limits ({@link ConnectionLimits}): user properties per packet, count and bytes
 *       (0x97); a started packet must be finished within the packet timeout (0x8D, or a close before
 *       CONNECT), and the bytes of unfinished packets of all connections of the node are bounded
 *       (0x97). A packet's bytes are held as they arrive, never allocated for its announced size.</li>
 * </ul>
 * A packet that passes goes on unchanged, one packet per buffer. One that fails becomes a failed
 * {@link MqttMessage} whose cause is an {@link InvalidPacketException} with the reason code, and
 * everything the client sends after it is discarded: the connection is about to close.
 */
final class MqttPacketValidator extends ByteToMessageDecoder {

    private final int maxPacketSize;
    private final NodeLimits limits;
    /** Bytes of an unfinished packet this connection holds, as counted in {@link NodeLimits#holdPartial}. */
    private long held;
    /** When the unfinished packet began (System.nanoTime), 0 when none is. */
    private long partialSince;
    private ScheduledFuture<?> timeout;
    /** Protocol level of the accepted-looking CONNECT (3, 4 or 5); 0 before it. */
    private int protocolLevel;
    private boolean failed;

    /** @param maxPacketSize largest packet accepted, fixed header included, in bytes */
    MqttPacketValidator(int maxPacketSize) {
        this(maxPacketSize, NodeLimits.defaults());
    }

    MqttPacketValidator(int maxPacketSize, NodeLimits limits) {
        this.maxPacketSize = maxPacketSize;
        this.limits = limits;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        int start = in.readerIndex();
        int readable = in.readableBytes();
        int remainingLength = 0;
        int multiplier = 1;
        int headerLength = 1;
        while (true) {
            if (headerLength >= readable) {
                unfinished(ctx, in, out); // the fixed header is not complete yet
                return;
            }
            int digit = in.getUnsignedByte(start + headerLength);
            headerLength++;
            remainingLength += (digit & 0x7F) * multiplier;
            if ((digit & 0x80) == 0) {
                break;
            }
            if (headerLength == 5) {
                // 1.5.5: a Variable Byte Integer has at most four bytes.
                fail(in, out, new InvalidPacketException(ReasonCode.MALFORMED_PACKET,
                        "Remaining Length longer than four bytes", null));
                return;
            }
            multiplier *= 128;
        }
        long total = (long) headerLength + remainingLength;
        if (total > maxPacketSize) {
            fail(in, out, new InvalidPacketException(ReasonCode.PACKET_TOO_LARGE,
                    "packet of " + total + " bytes is larger than the maximum packet size " + maxPacketSize, null));
            return;
        }
        if (readable < total) {
            unfinished(ctx, in, out);
            return;
        }
        ByteBuf packet = in.readRetainedSlice((int) total);
        partialSince = 0;
        if (!in.isReadable()) {
            release(); // the next packet has not begun
        }
        try {
            check(packet, headerLength);
        } catch (InvalidPacketException e) {
            packet.release();
            fail(in, out, e);
            return;
        }
        out.add(packet);
    }

    /**
     * {@code in} holds the start of a packet only: count its bytes towards the node's bound and
     * start the clock of the packet timeout.
     */
    private void unfinished(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int bytes = in.readableBytes();
        if (!limits.holdPartial(bytes - held)) {
            fail(in, out, new InvalidPacketException(ReasonCode.QUOTA_EXCEEDED,
                    "the node holds too many bytes of unfinished packets", null, NodeLimits.PARTIAL_PACKET_BYTES));
            return;
        }
        held = bytes;
        if (partialSince == 0) {
            partialSince = System.nanoTime();
            if (timeout == null) {
                scheduleTimeout(ctx, limits.limits().packetTimeout().toNanos());
            }
        }
    }

    private void scheduleTimeout(ChannelHandlerContext ctx, long nanos) {
        timeout = ctx.executor().schedule(() -> checkTimeout(ctx), nanos, TimeUnit.NANOSECONDS);
    }

    private void checkTimeout(ChannelHandlerContext ctx) {
        timeout = null;
        if (failed || partialSince == 0 || !ctx.channel().isActive()) {
            return;
        }
        long left = partialSince + limits.limits().packetTimeout().toNanos() - System.nanoTime();
        if (left > 0) {
            scheduleTimeout(ctx, left);
            return;
        }
        failed = true;
        release();
        ctx.fireChannelRead(new MqttMessage(null, null, null, DecoderResult.failure(new InvalidPacketException(
                ReasonCode.KEEP_ALIVE_TIMEOUT, "a packet was not finished within "
                + limits.limits().packetTimeout().toSeconds() + " s", null, NodeLimits.PACKET_TIMEOUT))));
    }

    /** Gives back the bytes of an unfinished packet counted for this connection. */
    private void release() {
        if (held != 0) {
            limits.holdPartial(-held);
            held = 0;
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        release();
        if (timeout != null) {
            timeout.cancel(false);
            timeout = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        failed = true; // what is left in the buffer is no packet any more
        super.channelInactive(ctx);
        release();
        partialSince = 0;
    }

    private void fail(ByteBuf in, List<Object> out, InvalidPacketException e) {
        failed = true;
        release();
        in.skipBytes(in.readableBytes());
        out.add(new MqttMessage(null, null, null, DecoderResult.failure(e)));
    }

    // ------------------------------------------------------------------ per packet type

    private void check(ByteBuf packet, int headerLength) {
        int first = packet.getUnsignedByte(0);
        int type = first >> 4;
        PacketReader r = new PacketReader(packet, headerLength, packet.readableBytes(), null, limits.limits());
        if (type == 1) {
            checkConnect(r);
            return;
        }
        if (protocolLevel == 0) {
            return; // not connected: the connection handler closes on anything but CONNECT [MQTT-3.1.0-1]
        }
        boolean v5 = protocolLevel == 5;
        switch (type) {
            case 3 -> {
                int qos = (first >> 1) & 0x03;
                if (qos == 3) {
                    return; // Netty's decoder refuses it as malformed [MQTT-3.3.1-4]
                }
                r.string("Topic Name");
                if (qos > 0) {
                    r.skip(2, "Packet Identifier");
                }
                if (v5) {
                    r.properties(PacketReader.Kind.PUBLISH);
                }
                // the rest is the payload
            }
            case 4, 5, 6, 7 -> {
                r.skip(2, "Packet Identifier");
                if (v5 && r.remaining() > 0) {
                    r.skip(1, "Reason Code");
                    if (r.remaining() > 0) {
                        r.properties(PacketReader.Kind.ACK);
                    }
                }
                r.end();
            }
            case 8 -> {
                r.skip(2, "Packet Identifier");
                if (v5) {
                    r.properties(PacketReader.Kind.SUBSCRIBE);
                }
                while (r.remaining() > 0) {
                    r.string("Topic Filter");
                    subscriptionOptions(r.u8("Subscription Options"), v5);
                }
            }
            case 10 -> {
                r.skip(2, "Packet Identifier");
                if (v5) {
                    r.properties(PacketReader.Kind.UNSUBSCRIBE);
                }
                while (r.remaining() > 0) {
                    r.string("Topic Filter");
                }
            }
            case 12 -> r.end();
            case 14 -> {
                if (v5 && r.remaining() > 0) {
                    r.skip(1, "Reason Code");
                    if (r.remaining() > 0) {
                        r.properties(PacketReader.Kind.DISCONNECT);
                    }
                }
                r.end();
            }
            case 15 -> {
                if (v5 && r.remaining() > 0) {
                    r.skip(1, "Reason Code");
                    if (r.remaining() > 0) {
                        r.properties(PacketReader.Kind.AUTH);
                    }
                    r.end();
                }
            }
            default -> {
                // Packets a client does not send: the connection handler answers them.
            }
        }
    }

    private void checkConnect(PacketReader r) {
        String name = r.protocolName();
        int level = r.u8("Protocol Version");
        boolean known = "MQTT".equals(name) && (level == 4 || level == 5) || "MQIsdp".equals(name) && level == 3;
        if (!known) {
            return; // Netty's decoder answers an unsupported protocol [MQTT-3.1.2-1] [MQTT-3.1.2-2]
        }
        ProtocolVersion version = ProtocolVersion.ofLevel(level);
        r.connectVersion = version;
        int flags = r.u8("Connect Flags");
        if (level >= 4 && (flags & 0x01) != 0) {
            // Checked here as well as by Netty, so the refusal knows the client's version. [MQTT-3.1.2-3]
            throw r.malformed("reserved flag set in CONNECT");
        }
        boolean will = (flags & 0x04) != 0;
        int willQos = (flags >> 3) & 0x03;
        boolean willRetain = (flags & 0x20) != 0;
        if (will && willQos == 3) {
            throw r.malformed("Will QoS 3"); // [MQTT-3.1.2-12]
        }
        if (!will && (willQos != 0 || willRetain)) {
            throw r.malformed("Will QoS or Will Retain set without the Will Flag"); // [MQTT-3.1.2-11]
        }
        if (level < 5 && (flags & 0x40) != 0 && (flags & 0x80) == 0) {
            // [MQTT-3.1.2-22] 3.1.1 (and 3.1): a password needs a user name; MQTT 5 allows it alone.
            throw r.protocolError("Password Flag set without the User Name Flag");
        }
        r.skip(2, "Keep Alive");
        if (level == 5) {
            r.properties(PacketReader.Kind.CONNECT);
        }
        r.string("Client Identifier");
        if (will) {
            if (level == 5) {
                r.properties(PacketReader.Kind.WILL);
            }
            r.string("Will Topic");
            r.binary("Will Payload");
        }
        if ((flags & 0x80) != 0) {
            r.string("User Name");
        }
        if ((flags & 0x40) != 0) {
            r.binary("Password");
        }
        r.end();
        if (protocolLevel == 0) {
            protocolLevel = level;
        }
    }

    private static void subscriptionOptions(int options, boolean v5) {
        if (!v5) {
            if ((options & 0xFC) != 0) {
                throw new InvalidPacketException(ReasonCode.MALFORMED_PACKET,
                        "reserved bits set in the requested QoS byte", null); // 3.1.1 [MQTT-3.8.3-4]
            }
            if ((options & 0x03) == 3) {
                throw new InvalidPacketException(ReasonCode.MALFORMED_PACKET, "requested QoS 3", null);
            }
            return;
        }
        if ((options & 0xC0) != 0) {
            throw new InvalidPacketException(ReasonCode.MALFORMED_PACKET,
                    "reserved bits set in the Subscription Options", null); // [MQTT-3.8.3-5]
        }
        if ((options & 0x03) == 3) {
            throw new InvalidPacketException(ReasonCode.PROTOCOL_ERROR, "Maximum QoS 3", null); // 3.8.3.1
        }
        if (((options >> 4) & 0x03) == 3) {
            throw new InvalidPacketException(ReasonCode.PROTOCOL_ERROR, "Retain Handling 3", null); // 3.8.3.1
        }
    }
}
