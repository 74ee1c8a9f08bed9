package io.fleetmq.transport.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.UserProperty;
import io.fleetmq.core.mqtt.Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The broker's own PUBLISH encoding says what Netty's MQTT encoder says, read back by Netty's
 * decoder, for both protocol versions, every property the broker sends and the remaining-length
 * boundaries; and a large payload goes out as views of one shared direct copy.
 */
class PublishEncoderTest {

    /** MQTT 5 CONNECT (clean start, empty client ID): the decoder then reads MQTT 5 properties. */
    private static final byte[] CONNECT_V5 = {0x10, 13, 0, 4, 'M', 'Q', 'T', 'T', 5, 2, 0, 60, 0, 0, 0};
    private static final byte[] CONNECT_V311 = {0x10, 12, 0, 4, 'M', 'Q', 'T', 'T', 4, 2, 0, 60, 0, 0};

    private static Packet.Publish publish(String topic, int alias, byte[] payload, int qos, boolean retain, boolean dup,
            long expiry, int format, String contentType, String responseTopic, byte[] correlation,
            List<UserProperty> user, List<Integer> subscriptionIds) {
        return new Packet.Publish(topic, alias, payload, qos, retain, dup, qos > 0 ? 4711 : 0, expiry, format,
                contentType, responseTopic, correlation, user, subscriptionIds);
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static List<Packet.Publish> samples() {
        List<Packet.Publish> all = new ArrayList<>();
        all.add(publish("a/b", 0, "hi".getBytes(), 0, false, false, -1, -1, null, null, null, List.of(), List.of()));
        all.add(publish("a/b", 0, new byte[0], 1, true, true, -1, -1, null, null, null, List.of(), List.of()));
        all.add(publish("sensors/über/°C", 0, bytes(300, 1), 2, false, true, 3600, 1, "text/plain; charset=utf-8",
                "replies/ö", bytes(17, 2), List.of(new UserProperty("k", "v"), new UserProperty("k", "v2"),
                        new UserProperty("ключ", "")), List.of(1, 127, 128, 16_384, 268_435_455)));
        all.add(publish("", 7, bytes(5, 3), 1, false, false, 0, 0, "", "", new byte[0], List.of(), List.of(42)));
        // Remaining lengths at the edges of the variable byte integer, and payloads below and above sharing.
        for (int n : new int[] {120, 121, 122, 123, 16_370, 16_371, 16_372, 16_377, 16_383, 16_384, 16_385,
                2_097_140, 2_097_150}) {
            all.add(publish("t/x", 0, bytes(n, n), n % 3, n % 2 == 0, false, -1, -1, null, null, null, List.of(), List.of()));
        }
        all.add(publish("big", 0, bytes(SharedPayloads.SHARE_FROM_BYTES, 9), 1, true, false, 60, 1, "application/json",
                "r", bytes(3, 4), List.of(new UserProperty("n", "v")), List.of(3)));
        return all;
    }

    /** The packet as Netty's decoder reads it, in a form that does not depend on the order of properties. */
    private static String decode(ByteBuf encoded, boolean v5) {
        EmbeddedChannel ch = new EmbeddedChannel(new MqttDecoder(268_435_455));
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(v5 ? CONNECT_V5 : CONNECT_V311));
            MqttMessage connect = ch.readInbound();
            assertTrue(connect.decoderResult().isSuccess(), connect.decoderResult().toString());
            ch.writeInbound(encoded);
            MqttPublishMessage m = ch.readInbound();
            assertTrue(m.decoderResult().isSuccess(), () -> m.decoderResult().cause().toString());
            Object rest = ch.readInbound();
            assertEquals(null, rest, "exactly one packet, nothing left over");
            List<String> props = new ArrayList<>();
            for (MqttProperties.MqttProperty<?> p : m.variableHeader().properties().listAll()) {
                props.add(p.propertyId() + ":" + text(p.value()));
            }
            props.sort(null);
            String text = m.fixedHeader().messageType() + " dup=" + m.fixedHeader().isDup() + " qos="
                    + m.fixedHeader().qosLevel() + " retain=" + m.fixedHeader().isRetain() + " topic="
                    + m.variableHeader().topicName() + " id=" + m.variableHeader().packetId() + " props=" + props
                    + " payload=" + m.payload().readableBytes() + ":" + Arrays.hashCode(ByteBufUtil.getBytes(m.payload()));
            m.release();
            return text;
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    private static String text(Object value) {
        if (value instanceof byte[] b) {
            return HexFormat.of().formatHex(b);
        }
        if (value instanceof MqttProperties.StringPair s) {
            return s.key + "=" + s.value;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(PublishEncoderTest::text).toList().toString(); // user properties, in order
        }
        return String.valueOf(value);
    }

    /** The packet as Netty's message type, every field and property mapped. */
    private static MqttPublishMessage nettyMessage(Packet.Publish p) {
        MqttProperties props = new MqttProperties();
        if (p.messageExpirySeconds() >= 0) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL.value(),
                    (int) p.messageExpirySeconds()));
        }
        if (p.payloadFormat() >= 0) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.PAYLOAD_FORMAT_INDICATOR.value(), p.payloadFormat()));
        }
        if (p.contentType() != null) {
            props.add(new MqttProperties.StringProperty(MqttPropertyType.CONTENT_TYPE.value(), p.contentType()));
        }
        if (p.responseTopic() != null) {
            props.add(new MqttProperties.StringProperty(MqttPropertyType.RESPONSE_TOPIC.value(), p.responseTopic()));
        }
        if (p.correlationData() != null) {
            props.add(new MqttProperties.BinaryProperty(MqttPropertyType.CORRELATION_DATA.value(), p.correlationData()));
        }
        if (p.topicAlias() > 0) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.TOPIC_ALIAS.value(), p.topicAlias()));
        }
        for (int id : p.subscriptionIds()) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.SUBSCRIPTION_IDENTIFIER.value(), id));
        }
        for (UserProperty u : p.userProperties()) {
            props.add(new MqttProperties.UserProperty(u.name(), u.value()));
        }
        return new MqttPublishMessage(
                new MqttFixedHeader(MqttMessageType.PUBLISH, p.dup(), MqttQoS.valueOf(p.qos()), p.retain(), 0),
                new MqttPublishVariableHeader(p.topic(), p.qos() > 0 ? p.packetId() : -1, props),
                Unpooled.wrappedBuffer(p.payload()));
    }

    /** What Netty's encoder makes of the same packet. */
    private static ByteBuf nettyEncoding(Packet.Publish p, boolean v5) {
        EmbeddedChannel ch = new EmbeddedChannel(new MqttDecoder(268_435_455), MqttEncoder.INSTANCE);
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(v5 ? CONNECT_V5 : CONNECT_V311)); // sets the channel's version
            ch.writeOutbound(nettyMessage(p));
            ByteBuf out = ch.readOutbound();
            return out;
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void everyPublishReadsBackAsNettysEncodingOfIt() {
        PublishEncoder encoder = new PublishEncoder(new SharedPayloads());
        for (boolean v5 : new boolean[] {true, false}) {
            for (Packet.Publish p : samples()) {
                ByteBuf ours = encoder.encode(ByteBufAllocator.DEFAULT, p, v5);
                ByteBuf theirs = nettyEncoding(p, v5);
                assertEquals(theirs.readableBytes(), ours.readableBytes(), p + " v5=" + v5 + ": length");
                assertEquals(decode(theirs, v5), decode(ours, v5), p + " v5=" + v5);
            }
        }
    }

    @Test
    void aLargePayloadIsOneDirectCopySharedByEveryPacketThatCarriesIt() {
        SharedPayloads shared = new SharedPayloads();
        PublishEncoder encoder = new PublishEncoder(shared);
        byte[] payload = bytes(1 << 20, 5);
        Packet.Publish p = publish("big", 0, payload, 1, false, false, -1, -1, null, null, null, List.of(), List.of());
        CompositeByteBuf first = (CompositeByteBuf) encoder.encode(ByteBufAllocator.DEFAULT, p, true);
        CompositeByteBuf second = (CompositeByteBuf) encoder.encode(ByteBufAllocator.DEFAULT, p.withDup(true), true);
        assertTrue(first.isDirect() && second.isDirect(), "a socket writes them without copying them again");
        ByteBuf a = first.internalComponent(1);
        ByteBuf b = second.internalComponent(1);
        assertEquals(payload.length, a.readableBytes());
        assertEquals(a.memoryAddress(), b.memoryAddress(), "both packets read the same memory");
        assertEquals(1, shared.size());
        assertEquals(payload.length, shared.bytes());
        assertArrayEquals(payload, ByteBufUtil.getBytes(a));
        first.release();
        second.release();

        // The same bytes in another array are another message: not shared with the first.
        CompositeByteBuf other = (CompositeByteBuf) encoder.encode(ByteBufAllocator.DEFAULT,
                publish("big", 0, payload.clone(), 0, false, false, -1, -1, null, null, null, List.of(), List.of()), true);
        assertNotEquals(a.memoryAddress(), other.internalComponent(1).memoryAddress());
        assertEquals(2, shared.size());
        other.release();
    }

    @Test
    void aPublishWaitingForTheEventLoopCountsItsBytesTowardsTheWriteBuffer() {
        Packet.Publish p = publish("t", 0, bytes(100_000, 6), 1, false, false, -1, -1, null, null, null,
                List.of(), List.of());
        int size = PublishEncoder.SIZE.newHandle().size(new PublishEncoder.Outbound(p, true));
        assertTrue(size >= 100_000, "counted as about its packet, not as an unknown object: " + size);
        assertEquals(42, PublishEncoder.SIZE.newHandle().size(Unpooled.wrappedBuffer(new byte[42])), "others as Netty counts them");
    }

    @Test
    void theOldestCopiesLeaveTheCacheYetStayReadableUntilTheirLastPacketIsWritten() {
        int size = SharedPayloads.SHARE_FROM_BYTES;
        SharedPayloads shared = new SharedPayloads(2L * size, 100);
        byte[] first = bytes(size, 1);
        ByteBuf view = shared.acquire(first, ByteBufAllocator.DEFAULT);
        shared.acquire(bytes(size, 2), ByteBufAllocator.DEFAULT).release();
        shared.acquire(bytes(size, 3), ByteBufAllocator.DEFAULT).release();
        assertEquals(2, shared.size(), "bounded by bytes");
        assertEquals(2L * size, shared.bytes());
        assertArrayEquals(first, ByteBufUtil.getBytes(view), "a view taken before its copy left still reads the payload");
        assertEquals(1, view.refCnt());
        view.release();
        assertEquals(0, view.refCnt(), "the last view frees the copy that left the cache");

        SharedPayloads fewEntries = new SharedPayloads(Long.MAX_VALUE, 3);
        for (int i = 0; i < 10; i++) {
            fewEntries.acquire(bytes(size, i), ByteBufAllocator.DEFAULT).release();
        }
        assertEquals(3, fewEntries.size(), "bounded by entries");
        // A payload larger than the whole bound is still shared while it is the newest.
        SharedPayloads tiny = new SharedPayloads(1, 100);
        byte[] large = bytes(4 * size, 7);
        ByteBuf x = tiny.acquire(large, ByteBufAllocator.DEFAULT);
        ByteBuf y = tiny.acquire(large, ByteBufAllocator.DEFAULT);
        assertEquals(x.memoryAddress(), y.memoryAddress());
        x.release();
        y.release();
    }
}
