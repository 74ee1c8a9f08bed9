package io.fleetmq.transport.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The validator in front of Netty's decoder, on an embedded channel: what passes, and each refusal's reason code. */
class MqttPacketValidatorTest {

    private static final String CONNECT_V5 = "100e00044d5154540502003c00000161"; // client "a", no properties
    private static final String CONNECT_V311 = "100d00044d5154540402003c000161";

    private final EmbeddedChannel channel = new EmbeddedChannel(new MqttPacketValidator(1024), new MqttDecoder(1024));

    @AfterEach
    void close() {
        channel.finishAndReleaseAll();
    }

    private void send(String hex) {
        channel.writeInbound(Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex.replace(" ", ""))));
    }

    private void send(byte[] bytes) {
        channel.writeInbound(Unpooled.wrappedBuffer(bytes));
    }

    private MqttMessage next() {
        MqttMessage m = channel.readInbound();
        if (m instanceof MqttPublishMessage) {
            ReferenceCountUtil.release(m);
        }
        return m;
    }

    private MqttMessage connected(String connectHex) {
        send(connectHex);
        MqttMessage connect = next();
        assertInstanceOf(MqttConnectMessage.class, connect);
        assertTrue(connect.decoderResult().isSuccess(), String.valueOf(connect.decoderResult()));
        return connect;
    }

    private InvalidPacketException refusal() {
        MqttMessage m = next();
        assertTrue(m != null && m.decoderResult().isFailure(), "a refused packet, got " + m);
        return assertInstanceOf(InvalidPacketException.class, m.decoderResult().cause());
    }

    /** A v5 PUBLISH QoS 0 to {@code topic} with the given properties (hex, without their length). */
    private static byte[] publish(String topic, String propertiesHex) {
        byte[] props = HexFormat.of().parseHex(propertiesHex.replace(" ", ""));
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        body.write(t.length >> 8);
        body.write(t.length);
        body.writeBytes(t);
        body.write(props.length);
        body.writeBytes(props);
        body.write('x');
        return packet(0x30, body.toByteArray());
    }

    private static byte[] packet(int first, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(first);
        int len = body.length;
        do {
            int digit = len % 128;
            len /= 128;
            out.write(len > 0 ? digit | 0x80 : digit);
        } while (len > 0);
        out.writeBytes(body);
        return out.toByteArray();
    }

    @Test
    @DisplayName("2.1.4 well-formed packets pass whole, one per buffer, however the bytes arrive")
    void wellFormedPacketsPassWholeEvenWhenSplitOrJoined() {
        byte[] connect = HexFormat.of().parseHex(CONNECT_V5);
        byte[] publish = publish("a/b", "0200000e10 230001"); // Message Expiry 3600, Topic Alias 1
        byte[] both = new byte[connect.length + publish.length];
        System.arraycopy(connect, 0, both, 0, connect.length);
        System.arraycopy(publish, 0, both, connect.length, publish.length);
        // one byte at a time, then two packets in one read
        for (byte b : both) {
            send(new byte[] {b});
        }
        send(publish);
        assertInstanceOf(MqttConnectMessage.class, next());
        for (int i = 0; i < 2; i++) {
            MqttMessage m = next();
            assertEquals(MqttMessageType.PUBLISH, m.fixedHeader().messageType());
            assertTrue(m.decoderResult().isSuccess(), String.valueOf(m.decoderResult()));
        }
        assertNull(next());
    }

    @Test
    @DisplayName("2.2.2.2 a property that may appear once, twice: Protocol Error 0x82 (two Message Expiry Intervals)")
    void duplicateMessageExpiryIsAProtocolError() {
        connected(CONNECT_V5);
        send(publish("t", "020000000a 020000000b"));
        InvalidPacketException e = refusal();
        assertEquals(ReasonCode.PROTOCOL_ERROR, e.reasonCode());
        assertTrue(e.getMessage().contains("Message Expiry Interval more than once"), e.getMessage());
    }

    @Test
    @DisplayName("3.3.2.3.4 two Topic Aliases: Protocol Error 0x82")
    void duplicateTopicAliasIsAProtocolError() {
        connected(CONNECT_V5);
        send(publish("t", "230001 230002"));
        assertEquals(ReasonCode.PROTOCOL_ERROR, refusal().reasonCode());
    }

    @Test
    @DisplayName("3.3.2.3.7 User Properties may repeat")
    void userPropertiesMayRepeat() {
        connected(CONNECT_V5);
        send(publish("t", "26 0001 61 0001 62 26 0001 61 0001 63"));
        assertTrue(next().decoderResult().isSuccess());
    }

    @Test
    @DisplayName("[MQTT-4.13.1-1] a Topic Name longer than the Remaining Length: Malformed Packet 0x81 at once")
    void fieldsOverrunningTheRemainingLengthAreMalformed() {
        connected(CONNECT_V5);
        send("3003 0064 61"); // Remaining Length 3, topic length 100
        InvalidPacketException e = refusal();
        assertEquals(ReasonCode.MALFORMED_PACKET, e.reasonCode());
        assertTrue(e.getMessage().contains("Topic Name runs past the end"), e.getMessage());
    }

    @Test
    @DisplayName("1.5.5 a Remaining Length of five bytes: Malformed Packet 0x81")
    void aFiveByteRemainingLengthIsMalformed() {
        connected(CONNECT_V5);
        send("30 ffffffff7f");
        assertEquals(ReasonCode.MALFORMED_PACKET, refusal().reasonCode());
    }

    @Test
    @DisplayName("[MQTT-1.5.4-1] [MQTT-1.5.4-2] ill-formed UTF-8 or U+0000 in a topic: Malformed Packet 0x81")
    void invalidUtf8IsMalformed() {
        for (String topic : new String[] {"0002 c328", "0003 eda080", "0002 c080", "0003 610062"}) {
            EmbeddedChannel ch = new EmbeddedChannel(new MqttPacketValidator(1024), new MqttDecoder(1024));
            ch.writeInbound(Unpooled.wrappedBuffer(HexFormat.of().parseHex(CONNECT_V5)));
            ReferenceCountUtil.release(ch.readInbound());
            String body = topic.replace(" ", "") + "00" + "78";
            ch.writeInbound(Unpooled.wrappedBuffer(packet(0x30, HexFormat.of().parseHex(body))));
            MqttMessage m = ch.readInbound();
            InvalidPacketException e = assertInstanceOf(InvalidPacketException.class, m.decoderResult().cause(), topic);
            assertEquals(ReasonCode.MALFORMED_PACKET, e.reasonCode(), topic);
            ch.finishAndReleaseAll();
        }
    }

    @Test
    @DisplayName("1.5.4 two-, three- and four-byte UTF-8 characters pass")
    void validMultiByteUtf8Passes() {
        connected(CONNECT_V5);
        send(publish("ü/€/😀", ""));
        assertTrue(next().decoderResult().isSuccess());
    }

    @Test
    @DisplayName("3.8.2.1.2 Subscription Identifier 0: Protocol Error 0x82")
    void subscriptionIdentifierZeroOrTwiceIsAProtocolError() {
        connected(CONNECT_V5);
        send("8209 0001 02 0b00 0001 61 00");
        assertEquals(ReasonCode.PROTOCOL_ERROR, refusal().reasonCode());
    }

    @Test
    @DisplayName("3.8.2.1.2 two Subscription Identifiers in a SUBSCRIBE: Protocol Error 0x82")
    void aSubscriptionIdentifierTwiceIsAProtocolError() {
        connected(CONNECT_V5);
        send("820b 0001 04 0b01 0b02 0001 61 00");
        assertEquals(ReasonCode.PROTOCOL_ERROR, refusal().reasonCode());
    }

    @Test
    @DisplayName("[MQTT-3.8.3-5] reserved bits in the Subscription Options: Malformed Packet 0x81")
    void reservedSubscriptionOptionBits() {
        connected(CONNECT_V5);
        send("8207 0001 00 0001 61 c1");
        assertEquals(ReasonCode.MALFORMED_PACKET, refusal().reasonCode());
    }

    @Test
    @DisplayName("3.8.3.1 Retain Handling 3: Protocol Error 0x82")
    void retainHandling3() {
        connected(CONNECT_V5);
        send("8207 0001 00 0001 61 30");
        assertEquals(ReasonCode.PROTOCOL_ERROR, refusal().reasonCode());
    }

    @Test
    @DisplayName("2.2.2.2 a property the packet type does not allow: Malformed Packet 0x81")
    void aPropertyNotAllowedInThePacketIsMalformed() {
        connected(CONNECT_V5);
        send(publish("t", "1100000010")); // Session Expiry Interval in a PUBLISH
        InvalidPacketException e = refusal();
        assertEquals(ReasonCode.MALFORMED_PACKET, e.reasonCode());
        assertTrue(e.getMessage().contains("Session Expiry Interval is not allowed in PUBLISH"), e.getMessage());
    }

    @Test
    @DisplayName("3.3.2.3.2 Payload Format Indicator other than 0 or 1: Protocol Error 0x82")
    void payloadFormatIndicatorOutOfRange() {
        connected(CONNECT_V5);
        send(publish("t", "0102"));
        assertEquals(ReasonCode.PROTOCOL_ERROR, refusal().reasonCode());
    }

    @Test
    @DisplayName("3.1.2.11.4 a packet larger than the maximum packet size is refused with 0x95 before its body arrives")
    void oversizePacketsAreRefusedFromTheirHeader() {
        connected(CONNECT_V5);
        send("30 e807"); // Remaining Length 1000: 1003 bytes in all, within 1024
        assertNull(next(), "waiting for the 1000 bytes");
        send("30 d00f"); // not a new packet for the validator: the first one is still incomplete
        assertNull(next());

        EmbeddedChannel ch = new EmbeddedChannel(new MqttPacketValidator(1024), new MqttDecoder(1024));
        ch.writeInbound(Unpooled.wrappedBuffer(HexFormat.of().parseHex(CONNECT_V5)));
        ReferenceCountUtil.release(ch.readInbound());
        ch.writeInbound(Unpooled.wrappedBuffer(HexFormat.of().parseHex("30d00f"))); // Remaining Length 2000
        MqttMessage m = ch.readInbound();
        assertEquals(ReasonCode.PACKET_TOO_LARGE,
                assertInstanceOf(InvalidPacketException.class, m.decoderResult().cause()).reasonCode());
        ch.finishAndReleaseAll();
    }

    @Test
    @DisplayName("[MQTT-4.13.1-1] after a refusal everything else the client sends is discarded")
    void afterARefusalTheRestIsDiscarded() {
        connected(CONNECT_V5);
        send(publish("t", "0102"));
        refusal();
        send(publish("t", ""));
        assertNull(next());
    }

    @Test
    @DisplayName("[MQTT-3.1.2-12] Will QoS 3 in a 3.1.1 CONNECT: malformed, and the refusal knows the version")
    void aMalformedConnectCarriesItsVersion() {
        send("100d00044d515454041e003c000161"); // will flag, will QoS 3, no will fields
        InvalidPacketException e = refusal();
        assertEquals(ReasonCode.MALFORMED_PACKET, e.reasonCode());
        assertEquals(ProtocolVersion.V3_1_1, e.connectVersion());
    }

    @Test
    @DisplayName("[MQTT-3.1.2-3] the CONNECT reserved flag set: malformed, answered in the client's version")
    void connectReservedFlag() {
        send("100d00044d5154540403003c000161");
        InvalidPacketException e = refusal();
        assertEquals(ReasonCode.MALFORMED_PACKET, e.reasonCode());
        assertEquals(ProtocolVersion.V3_1_1, e.connectVersion());
    }

    @Test
    @DisplayName("[MQTT-3.1.4-1] a CONNECT with bytes after its last field: Malformed Packet 0x81")
    void trailingBytesInConnect() {
        send("100f00044d5154540502003c0000016100");
        assertEquals(ReasonCode.MALFORMED_PACKET, refusal().reasonCode());
    }

    @Test
    @DisplayName("3.1.1 [MQTT-3.8.3-4] 3.1.1 packets have no properties; reserved bits in the requested QoS are malformed")
    void mqtt311PacketsHaveNoProperties() {
        connected(CONNECT_V311);
        send("3005 0001 61 0102"); // would be a bad property in v5; in 3.1.1 it is payload
        assertTrue(next().decoderResult().isSuccess());
        send("8206 0001 0001 61 04"); // 3.1.1: requested QoS byte with a reserved bit
        assertEquals(ReasonCode.MALFORMED_PACKET, refusal().reasonCode());
    }
}
