package io.fleetmq.core.message;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MessageCodecTest {

    private static final long T0 = 1_780_000_000_000L;

    private static BrokerMessage roundTrip(BrokerMessage m) throws MessageFormatException {
        BrokerMessage decoded = MessageCodec.decode(MessageCodec.encode(m));
        assertEquals(m, decoded);
        return decoded;
    }

    private static BrokerMessage everything() {
        List<UserProperty> props = List.of(new UserProperty("unit", "°C"), new UserProperty("site", "north"),
                new UserProperty("unit", "K"));
        return new BrokerMessage("sensors/dev-1/temp", "21.5".getBytes(StandardCharsets.UTF_8), 2, true, "dev-1", T0,
                3600, BrokerMessage.PAYLOAD_FORMAT_UTF8, "text/plain; charset=utf-8", "replies/dev-1",
                new byte[] {0, 1, 2, (byte) 0xFF}, props);
    }

    private static void assertMalformed(byte[] bytes, String expectedInMessage) {
        MessageFormatException e = assertThrows(MessageFormatException.class, () -> MessageCodec.decode(bytes));
        assertTrue(e.getMessage().contains(expectedInMessage), e.getMessage());
    }

    // ---------------------------------------------------------------- round trips

    @Test
    void everyCombinationOfFlagsAndOptionalPropertiesRoundTrips() throws MessageFormatException {
        int combinations = 0;
        for (int qos = 0; qos <= 2; qos++) {
            for (boolean retain : new boolean[] {false, true}) {
                for (long expiry : new long[] {BrokerMessage.NO_EXPIRY, 0, 120}) {
                    for (int format = -1; format <= 1; format++) {
                        for (int optional = 0; optional < 16; optional++) {
                            String contentType = (optional & 1) != 0 ? "application/json" : null;
                            String responseTopic = (optional & 2) != 0 ? "resp/x" : null;
                            byte[] correlation = (optional & 4) != 0 ? new byte[] {42, 43} : null;
                            List<UserProperty> props = (optional & 8) != 0
                                    ? List.of(new UserProperty("a", "b")) : List.of();
                            BrokerMessage m = new BrokerMessage("t/" + qos, new byte[] {(byte) optional}, qos, retain,
                                    "client-" + format, T0 + optional, expiry, format, contentType, responseTopic,
                                    correlation, props);
                            roundTrip(m);
                            combinations++;
                        }
                    }
                }
            }
        }
        assertEquals(3 * 2 * 3 * 3 * 16, combinations);
    }

    @Test
    void emptyPayloadRoundTrips() throws MessageFormatException {
        assertEquals(0, roundTrip(BrokerMessage.of("a", new byte[0], 1, true, "c", T0)).payload().length);
    }

    @Test
    void oneMebibytePayloadRoundTrips() throws MessageFormatException {
        byte[] payload = new byte[1 << 20];
        new Random(7).nextBytes(payload);
        BrokerMessage m = BrokerMessage.of("big", payload, 1, false, "c", T0);
        byte[] encoded = MessageCodec.encode(m);
        assertTrue(encoded.length < payload.length + 32, "encoded " + encoded.length);
        assertEquals(m, MessageCodec.decode(encoded));
    }

    @Test
    void unicodeStringsRoundTrip() throws MessageFormatException {
        // Two-, three- and four-byte UTF-8, plus a genuine U+FFFD, which must not be taken for a decoding error.
        String topic = "häuser/東京/🌡️/\uFFFD/temp";
        BrokerMessage m = new BrokerMessage(topic, new byte[] {1}, 1, false, "Gerät-ø", T0, -1, 1, "тип/🙂",
                "ответ/👍", null, List.of(new UserProperty("名前", "値 🚀")));
        BrokerMessage decoded = roundTrip(m);
        assertEquals(topic, decoded.topic());
    }

    @Test
    void noOptionalPropertiesRoundTripsAsAbsent() throws MessageFormatException {
        BrokerMessage decoded = roundTrip(BrokerMessage.of("a/b", new byte[] {5}, 0, false, "c", T0));
        assertEquals(BrokerMessage.NO_EXPIRY, decoded.expiryIntervalSeconds());
        assertEquals(BrokerMessage.PAYLOAD_FORMAT_ABSENT, decoded.payloadFormat());
        assertEquals(null, decoded.contentType());
        assertEquals(null, decoded.responseTopic());
        assertEquals(null, decoded.correlationData());
        assertEquals(List.of(), decoded.userProperties());
    }

    @Test
    void presentButEmptyPropertiesStayDistinctFromAbsentOnes_MQTT_3_3_2_4() throws MessageFormatException {
        // A subscriber must get the publisher's properties unaltered: "" is not "absent", 0 is not "absent".
        BrokerMessage decoded = roundTrip(new BrokerMessage("a", new byte[0], 1, false, "c", T0, 0,
                BrokerMessage.PAYLOAD_FORMAT_BYTES, "", "r", new byte[0], List.of(new UserProperty("", ""))));
        assertEquals("", decoded.contentType());
        assertEquals(0, decoded.correlationData().length);
        assertEquals(0, decoded.expiryIntervalSeconds());
        assertEquals(BrokerMessage.PAYLOAD_FORMAT_BYTES, decoded.payloadFormat());
    }

    @Test
    void allPropertiesRoundTrip() throws MessageFormatException {
        roundTrip(everything());
    }

    @Test
    void manyUserPropertiesKeepTheirOrderIncludingDuplicates_MQTT_3_3_2_17_MQTT_3_3_2_18() throws MessageFormatException {
        List<UserProperty> props = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            props.add(new UserProperty("k" + (i % 7), "v" + i));
        }
        BrokerMessage decoded = roundTrip(new BrokerMessage("a", new byte[0], 0, false, "c", T0, -1, -1, null, null,
                null, props));
        assertEquals(props, decoded.userProperties());
    }

    @Test
    void extremeNumbersRoundTrip() throws MessageFormatException {
        roundTrip(new BrokerMessage("a", new byte[0], 0, false, "c", Long.MAX_VALUE,
                BrokerMessage.MAX_EXPIRY_INTERVAL_SECONDS, -1, null, null, null, List.of()));
        roundTrip(new BrokerMessage("a", new byte[0], 0, false, "c", 0, 0, -1, null, null, null, List.of()));
    }

    // ---------------------------------------------------------------- the format itself

    @Test
    void theVersion1LayoutIsStable() {
        // Pinned byte for byte: nodes of different versions share Kafka, so a change here needs a new version.
        byte[] plain = MessageCodec.encode(BrokerMessage.of("a/b", new byte[] {1, 2}, 1, true, "c1", 300));
        assertArrayEquals(new byte[] {
                1,                      // version
                0x05,                   // flags: QoS 1, RETAIN
                (byte) 0xAC, 0x02,      // createdAtMillis 300 as varint
                3, 'a', '/', 'b',       // topic
                2, 'c', '1',            // publisherId
                0,                      // no user properties
                2, 1, 2,                // payload
        }, plain);

        byte[] full = MessageCodec.encode(new BrokerMessage("t", new byte[0], 2, true, "c", 1, 60, 1, "j", "r",
                new byte[] {7}, List.of(new UserProperty("k", "v"))));
        assertArrayEquals(new byte[] {
                1, (byte) 0xFE, 1,      // version, flags: QoS 2, RETAIN, all five optional fields; createdAtMillis 1
                1, 't', 1, 'c',         // topic, publisherId
                60,                     // expiry interval
                1,                      // payload format
                1, 'j', 1, 'r',         // content type, response topic
                1, 7,                   // correlation data
                1, 1, 'k', 1, 'v',      // one user property
                0,                      // empty payload
        }, full);
    }

    @Test
    void aTypicalSmallMessageIsCompact() {
        BrokerMessage m = BrokerMessage.of("sensors/dev-1/temp", new byte[8], 1, false, "dev-1", T0);
        int size = MessageCodec.encode(m).length;
        int content = m.topic().length() + m.payload().length + m.publisherId().length();
        int overhead = size - content;
        System.out.printf("typical small message: %d bytes encoded, %d content, %d overhead%n", size, content, overhead);
        // version, flags, 6-byte timestamp, 3 length bytes, user property count.
        assertEquals(12, overhead);
        assertTrue(size - m.topic().length() - m.payload().length < 40);

        int withProperties = MessageCodec.encode(everything()).length;
        System.out.printf("message with all properties: %d bytes encoded%n", withProperties);
    }

    // ---------------------------------------------------------------- bad input

    @Test
    void anUnknownVersionIsRefusedByName() {
        byte[] encoded = MessageCodec.encode(everything());
        encoded[0] = 2;
        assertMalformed(encoded, "unknown message format version 2");
        encoded[0] = 0;
        assertMalformed(encoded, "unknown message format version 0");
    }

    @Test
    void anEmptyArrayIsMalformed() {
        assertMalformed(new byte[0], "truncated: format version");
    }

    @Test
    void everyTruncationOfAValidEncodingFailsCleanly() {
        byte[] encoded = MessageCodec.encode(everything());
        for (int length = 0; length < encoded.length; length++) {
            byte[] truncated = Arrays.copyOf(encoded, length);
            MessageFormatException e = assertThrows(MessageFormatException.class, () -> MessageCodec.decode(truncated),
                    "length " + length);
            assertTrue(e.getMessage().startsWith("truncated"), length + ": " + e.getMessage());
        }
    }

    @Test
    void bytesAfterThePayloadAreRefused() {
        byte[] encoded = MessageCodec.encode(everything());
        assertMalformed(Arrays.copyOf(encoded, encoded.length + 1), "1 unexpected bytes after the payload");
    }

    @Test
    void qos3IsRefused() {
        byte[] encoded = MessageCodec.encode(BrokerMessage.of("a", new byte[0], 2, false, "c", T0));
        encoded[1] |= 0x03;
        assertMalformed(encoded, "QoS 3");
    }

    @Test
    void invalidUtf8InATopicIsRefused() {
        byte[] encoded = MessageCodec.encode(BrokerMessage.of("abc", new byte[0], 0, false, "c", 1));
        // version, flags, createdAt(1), length, then "abc": make the middle byte a lone continuation byte.
        encoded[5] = (byte) 0x80;
        assertMalformed(encoded, "topic at offset 4 is not valid UTF-8");
    }

    @Test
    void utf8EncodedSurrogatesAreRefused() {
        byte[] encoded = MessageCodec.encode(BrokerMessage.of("abc", new byte[0], 0, false, "c", 1));
        // ED A0 80 would be U+D800, which UTF-8 must not carry [MQTT-1.5.4-1].
        encoded[4] = (byte) 0xED;
        encoded[5] = (byte) 0xA0;
        encoded[6] = (byte) 0x80;
        assertMalformed(encoded, "not valid UTF-8");
    }

    @Test
    void decodedValuesOutOfRangeAreMalformedNotIllegalArguments() {
        byte[] emptyTopic = {1, 0, 1, 0, 1, 'c', 0, 0};
        assertMalformed(emptyTopic, "topic must not be empty");
        byte[] payloadFormat7 = {1, 0x10, 1, 1, 't', 1, 'c', 7, 0, 0};
        assertMalformed(payloadFormat7, "payloadFormat");
    }

    @Test
    void absurdLengthsAndCountsAreRefusedBeforeAllocating() {
        // Topic length 2^31-1 in a 10-byte record.
        assertMalformed(new byte[] {1, 0, 1, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x07, 0, 0},
                "truncated: topic needs 2147483647 byte(s)");
        // A length beyond int range.
        assertMalformed(new byte[] {1, 0, 1, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x0F},
                "out of range");
        // A varint that never ends.
        assertMalformed(new byte[] {1, 0, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80,
                (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0}, "longer than 9 bytes");
        // Two billion user properties announced, three bytes left.
        assertMalformed(new byte[] {1, 0, 1, 1, 't', 1, 'c', (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x07,
                0, 0, 0}, "2147483647 user properties need at least 4294967294 bytes");
    }

    @Test
    void randomGarbageOnlyEverFailsWithMessageFormatException() {
        Random random = new Random(20_260_101L);
        byte[] valid = MessageCodec.encode(everything());
        int decoded = 0;
        for (int i = 0; i < 200_000; i++) {
            byte[] bytes;
            if (i % 2 == 0) {
                bytes = new byte[random.nextInt(64)];
                random.nextBytes(bytes);
                if (bytes.length > 0 && random.nextBoolean()) {
                    bytes[0] = MessageCodec.FORMAT_VERSION; // get past the version check
                }
            } else {
                // A valid encoding with a few bytes corrupted reaches every field.
                bytes = valid.clone();
                for (int flips = 1 + random.nextInt(3); flips > 0; flips--) {
                    bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
                }
            }
            try {
                MessageCodec.decode(bytes);
                decoded++;
            } catch (MessageFormatException expected) {
                // the one allowed outcome besides a message
            } catch (RuntimeException e) {
                fail("input " + Arrays.toString(bytes) + " threw " + e, e);
            }
        }
        // Some corruptions (in the payload, say) still decode; the run must have reached past the header.
        assertTrue(decoded > 0, "nothing decoded");
    }

    @Test
    void anUnpairedSurrogateCannotBeEncoded() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MessageCodec.encode(BrokerMessage.of("a\uD800b", new byte[0], 0, false, "c", T0)));
        assertTrue(e.getMessage().contains("topic has an unpaired surrogate at index 1"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> MessageCodec.encode(BrokerMessage.of("a", new byte[0], 0, false, "c\uDC00", T0)));
    }
}
