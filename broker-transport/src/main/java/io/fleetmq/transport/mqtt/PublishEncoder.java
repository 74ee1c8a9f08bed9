package io.fleetmq.transport.mqtt;

import io.fleetmq.core.message.UserProperty;
import io.fleetmq.core.mqtt.Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultMessageSizeEstimator;
import io.netty.channel.MessageSizeEstimator;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Encodes the PUBLISH packets the broker sends, on the connection's event loop. A payload of at
 * least {@link SharedPayloads#SHARE_FROM_BYTES} is not copied into each connection's packet: the
 * packet is its own header followed by a view of one direct copy of the payload that every
 * connection the message goes to shares. Without that, a 1 MiB message fanned out to 2,000
 * subscribers whose sockets are full holds 2 GB of direct memory, and a node runs out of it.
 *
 * <p>Every other packet type goes on to Netty's {@code MqttEncoder}.
 */
@ChannelHandler.Sharable
final class PublishEncoder extends ChannelOutboundHandlerAdapter {

    /** One JVM-wide cache, so that a message's subscribers on every listener share one copy. */
    static final PublishEncoder INSTANCE = new PublishEncoder(new SharedPayloads());

    /** A PUBLISH on its way out, with the protocol version of the connection it is written to. */
    record Outbound(Packet.Publish publish, boolean v5) {
    }

    /**
     * Sizes pending writes for the channel's write buffer bound: an {@link Outbound} by its payload
     * and topic (Netty would count it as 8 bytes until it is encoded, so a session writing from its
     * own thread would see the socket writable long after it is not), anything else as Netty does.
     */
    static final MessageSizeEstimator SIZE = new MessageSizeEstimator() {
        private final Handle handle = new Handle() {
            private final Handle others = DefaultMessageSizeEstimator.DEFAULT.newHandle();

            @Override
            public int size(Object msg) {
                return msg instanceof Outbound o
                        ? o.publish().payload().length + o.publish().topic().length() + 16
                        : others.size(msg);
            }
        };

        @Override
        public Handle newHandle() {
            return handle;
        }
    };

    private static final int PAYLOAD_FORMAT_INDICATOR = 0x01;
    private static final int MESSAGE_EXPIRY_INTERVAL = 0x02;
    private static final int CONTENT_TYPE = 0x03;
    private static final int RESPONSE_TOPIC = 0x08;
    private static final int CORRELATION_DATA = 0x09;
    private static final int SUBSCRIPTION_IDENTIFIER = 0x0B;
    private static final int TOPIC_ALIAS = 0x23;
    private static final int USER_PROPERTY = 0x26;

    private final SharedPayloads payloads;

    PublishEncoder(SharedPayloads payloads) {
        this.payloads = payloads;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof Outbound o)) {
            ctx.write(msg, promise);
            return;
        }
        ByteBuf encoded;
        try {
            encoded = encode(ctx.alloc(), o.publish(), o.v5());
        } catch (RuntimeException | Error e) {
            // Out of direct memory, most likely: the connection's exception handler says so and closes it.
            promise.setFailure(e);
            return;
        }
        ctx.write(encoded, promise);
    }

    /** The whole packet: one buffer, or the header and a shared view of a large payload. */
    ByteBuf encode(ByteBufAllocator alloc, Packet.Publish p, boolean v5) {
        byte[] topic = p.topic().getBytes(StandardCharsets.UTF_8);
        Properties props = v5 ? new Properties(p) : null;
        int variable = 2 + topic.length + (p.qos() > 0 ? 2 : 0)
                + (props == null ? 0 : varIntSize(props.length) + props.length);
        byte[] payload = p.payload();
        int remaining = variable + payload.length;
        int header = 1 + varIntSize(remaining) + variable;
        boolean share = payload.length >= SharedPayloads.SHARE_FROM_BYTES;
        ByteBuf out = alloc.buffer(share ? header : header + payload.length);
        try {
            // [MQTT-3.3.1] type 3, then DUP, QoS and RETAIN in the low four bits.
            out.writeByte(0x30 | (p.dup() ? 0x08 : 0) | (p.qos() << 1) | (p.retain() ? 0x01 : 0));
            writeVarInt(out, remaining);
            out.writeShort(topic.length).writeBytes(topic);
            if (p.qos() > 0) {
                out.writeShort(p.packetId());
            }
            if (props != null) {
                writeVarInt(out, props.length);
                props.write(out);
            }
            if (!share) {
                return out.writeBytes(payload);
            }
            ByteBuf body = payloads.acquire(payload, alloc);
            return alloc.compositeDirectBuffer(2).addComponents(true, out, body);
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
    }

    /** A PUBLISH's MQTT 5 properties, measured once and written in the order of their identifiers. */
    private static final class Properties {
        private final Packet.Publish p;
        private final byte[] contentType;
        private final byte[] responseTopic;
        private final byte[][] userProperties;
        final int length;

        Properties(Packet.Publish p) {
            this.p = p;
            this.contentType = utf8(p.contentType());
            this.responseTopic = utf8(p.responseTopic());
            int n = 0;
            if (p.payloadFormat() >= 0) {
                n += 2;
            }
            if (p.messageExpirySeconds() >= 0) {
                n += 5;
            }
            if (contentType != null) {
                n += 3 + contentType.length;
            }
            if (responseTopic != null) {
                n += 3 + responseTopic.length;
            }
            if (p.correlationData() != null) {
                n += 3 + p.correlationData().length;
            }
            for (int id : p.subscriptionIds()) {
                n += 1 + varIntSize(id);
            }
            if (p.topicAlias() > 0) {
                n += 3;
            }
            List<UserProperty> user = p.userProperties();
            userProperties = new byte[user.size() * 2][];
            for (int i = 0; i < user.size(); i++) {
                userProperties[2 * i] = utf8(user.get(i).name());
                userProperties[2 * i + 1] = utf8(user.get(i).value());
                n += 5 + userProperties[2 * i].length + userProperties[2 * i + 1].length;
            }
            this.length = n;
        }

        void write(ByteBuf out) {
            if (p.payloadFormat() >= 0) {
                out.writeByte(PAYLOAD_FORMAT_INDICATOR).writeByte(p.payloadFormat());
            }
            if (p.messageExpirySeconds() >= 0) {
                out.writeByte(MESSAGE_EXPIRY_INTERVAL).writeInt((int) p.messageExpirySeconds());
            }
            if (contentType != null) {
                out.writeByte(CONTENT_TYPE).writeShort(contentType.length).writeBytes(contentType);
            }
            if (responseTopic != null) {
                out.writeByte(RESPONSE_TOPIC).writeShort(responseTopic.length).writeBytes(responseTopic);
            }
            if (p.correlationData() != null) {
                out.writeByte(CORRELATION_DATA).writeShort(p.correlationData().length).writeBytes(p.correlationData());
            }
            for (int id : p.subscriptionIds()) {
                out.writeByte(SUBSCRIPTION_IDENTIFIER);
                writeVarInt(out, id);
            }
            if (p.topicAlias() > 0) {
                out.writeByte(TOPIC_ALIAS).writeShort(p.topicAlias());
            }
            for (int i = 0; i < userProperties.length; i += 2) {
                out.writeByte(USER_PROPERTY)
                        .writeShort(userProperties[i].length).writeBytes(userProperties[i])
                        .writeShort(userProperties[i + 1].length).writeBytes(userProperties[i + 1]);
            }
        }

        private static byte[] utf8(String s) {
            return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
        }
    }

    /** [MQTT-1.5.5] bytes of a Variable Byte Integer. */
    static int varIntSize(int value) {
        return value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4;
    }

    private static void writeVarInt(ByteBuf out, int value) {
        do {
            int digit = value & 0x7F;
            value >>>= 7;
            out.writeByte(value > 0 ? digit | 0x80 : digit);
        } while (value > 0);
    }
}
