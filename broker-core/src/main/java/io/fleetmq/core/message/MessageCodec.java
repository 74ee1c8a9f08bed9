package io.fleetmq.core.message;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary form of a {@link BrokerMessage} in Kafka record values.
 *
 * <p>Compact rather than self-describing: every PUBLISH is written to Kafka at least once and
 * usually again on its way to subscribers, so a typical small message costs about a dozen bytes
 * beyond its topic, client ID and payload. Field names never appear; the leading version byte is
 * what lets the layout change later, and a reader refuses versions it does not know rather than
 * guess.
 *
 * <h2>Format version 1</h2>
 * <pre>
 * version            1 byte, = 1
 * flags              1 byte: bits 0-1 QoS, bit 2 RETAIN, then one bit per optional field present:
 *                    bit 3 expiry interval, bit 4 payload format, bit 5 content type,
 *                    bit 6 response topic, bit 7 correlation data
 * createdAtMillis    varint
 * topic              string
 * publisherId        string
 * expiryInterval     varint                 if bit 3
 * payloadFormat      1 byte, 0 or 1         if bit 4
 * contentType        string                 if bit 5
 * responseTopic      string                 if bit 6
 * correlationData    bytes                  if bit 7
 * userProperties     varint count, then count x (name string, value string), in order
 * payload            bytes
 * </pre>
 * A varint is an unsigned base-128 integer, low 7 bits first, high bit set on every byte but the
 * last. A string is a varint length and that many bytes of UTF-8; bytes are a varint length and the
 * bytes. Every field is length-prefixed, including the payload, so a truncated record is always
 * detected, and the encoding must end exactly after the payload.
 */
public final class MessageCodec {

    /** The format {@link #encode} writes; the first byte of every encoding. */
    public static final int FORMAT_VERSION = 1;

    private static final int QOS_MASK = 0b0000_0011;
    private static final int RETAIN = 1 << 2;
    private static final int HAS_EXPIRY = 1 << 3;
    private static final int HAS_PAYLOAD_FORMAT = 1 << 4;
    private static final int HAS_CONTENT_TYPE = 1 << 5;
    private static final int HAS_RESPONSE_TOPIC = 1 << 6;
    private static final int HAS_CORRELATION_DATA = 1 << 7;

    /** A non-negative int needs at most 5 varint bytes, a non-negative long at most 9. */
    private static final int MAX_INT_VARINT_BYTES = 5;
    private static final int MAX_LONG_VARINT_BYTES = 9;

    private MessageCodec() {
    }

    /**
     * Encodes {@code message} into a new array of exactly the encoded size.
     *
     * @throws IllegalArgumentException if a string holds an unpaired surrogate, which has no UTF-8
     *         form; MQTT does not allow one [MQTT-1.5.4-1], so it only gets here by a bug upstream
     *         and must not be silently replaced by {@code '?'}
     */
    public static byte[] encode(BrokerMessage message) {
        byte[] topic = utf8(message.topic(), "topic");
        byte[] publisherId = utf8(message.publisherId(), "publisherId");
        byte[] contentType = message.contentType() == null ? null : utf8(message.contentType(), "contentType");
        byte[] responseTopic = message.responseTopic() == null ? null : utf8(message.responseTopic(), "responseTopic");
        List<UserProperty> properties = message.userProperties();
        byte[][] propertyBytes = new byte[properties.size() * 2][];
        for (int i = 0; i < properties.size(); i++) {
            propertyBytes[2 * i] = utf8(properties.get(i).name(), "user property name");
            propertyBytes[2 * i + 1] = utf8(properties.get(i).value(), "user property value");
        }

        int flags = message.qos();
        int size = 2 + varintSize(message.createdAtMillis()) + sizeOf(topic) + sizeOf(publisherId);
        if (message.retain()) {
            flags |= RETAIN;
        }
        if (message.expiryIntervalSeconds() != BrokerMessage.NO_EXPIRY) {
            flags |= HAS_EXPIRY;
            size += varintSize(message.expiryIntervalSeconds());
        }
        if (message.payloadFormat() != BrokerMessage.PAYLOAD_FORMAT_ABSENT) {
            flags |= HAS_PAYLOAD_FORMAT;
            size += 1;
        }
        if (contentType != null) {
            flags |= HAS_CONTENT_TYPE;
            size += sizeOf(contentType);
        }
        if (responseTopic != null) {
            flags |= HAS_RESPONSE_TOPIC;
            size += sizeOf(responseTopic);
        }
        if (message.correlationData() != null) {
            flags |= HAS_CORRELATION_DATA;
            size += sizeOf(message.correlationData());
        }
        size += varintSize(properties.size());
        for (byte[] b : propertyBytes) {
            size += sizeOf(b);
        }
        size += sizeOf(message.payload());

        Writer out = new Writer(size);
        out.writeByte(FORMAT_VERSION);
        out.writeByte(flags);
        out.writeVarint(message.createdAtMillis());
        out.writeBytes(topic);
        out.writeBytes(publisherId);
        if ((flags & HAS_EXPIRY) != 0) {
            out.writeVarint(message.expiryIntervalSeconds());
        }
        if ((flags & HAS_PAYLOAD_FORMAT) != 0) {
            out.writeByte(message.payloadFormat());
        }
        if (contentType != null) {
            out.writeBytes(contentType);
        }
        if (responseTopic != null) {
            out.writeBytes(responseTopic);
        }
        if (message.correlationData() != null) {
            out.writeBytes(message.correlationData());
        }
        out.writeVarint(properties.size());
        for (byte[] b : propertyBytes) {
            out.writeBytes(b);
        }
        out.writeBytes(message.payload());
        return out.finish();
    }

    /**
     * Decodes what {@link #encode} wrote.
     *
     * @throws MessageFormatException if {@code bytes} is of an unknown format version, truncated,
     *         has bytes left over, or is otherwise not a valid encoding; never any other exception
     *         for any content of {@code bytes}
     */
    public static BrokerMessage decode(byte[] bytes) throws MessageFormatException {
        Reader in = new Reader(bytes);
        int version = in.readByte("format version");
        if (version != FORMAT_VERSION) {
            throw new MessageFormatException("unknown message format version " + version + " (this broker reads "
                    + FORMAT_VERSION + "); was the record written by a newer broker or by something else?");
        }
        int flags = in.readByte("flags");
        int qos = flags & QOS_MASK;
        if (qos == 3) {
            throw new MessageFormatException("invalid QoS 3 in flags byte");
        }
        long createdAtMillis = in.readVarint(MAX_LONG_VARINT_BYTES, "createdAtMillis");
        String topic = in.readString("topic");
        String publisherId = in.readString("publisherId");
        long expiry = BrokerMessage.NO_EXPIRY;
        if ((flags & HAS_EXPIRY) != 0) {
            expiry = in.readVarint(MAX_LONG_VARINT_BYTES, "expiry interval");
        }
        int payloadFormat = BrokerMessage.PAYLOAD_FORMAT_ABSENT;
        if ((flags & HAS_PAYLOAD_FORMAT) != 0) {
            payloadFormat = in.readByte("payload format");
        }
        String contentType = (flags & HAS_CONTENT_TYPE) != 0 ? in.readString("content type") : null;
        String responseTopic = (flags & HAS_RESPONSE_TOPIC) != 0 ? in.readString("response topic") : null;
        byte[] correlationData = (flags & HAS_CORRELATION_DATA) != 0 ? in.readBytes("correlation data") : null;
        int count = in.readLength("user property count");
        // Each property needs at least its two length bytes: refuses absurd counts before allocating.
        if (count > in.remaining() / 2) {
            throw new MessageFormatException("truncated: " + count + " user properties need at least " + 2L * count
                    + " bytes at offset " + in.position() + " but only " + in.remaining() + " are left");
        }
        List<UserProperty> properties = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            properties.add(new UserProperty(in.readString("user property name"), in.readString("user property value")));
        }
        byte[] payload = in.readBytes("payload");
        if (in.remaining() != 0) {
            throw new MessageFormatException(in.remaining() + " unexpected bytes after the payload, at offset "
                    + in.position() + " of " + bytes.length);
        }
        try {
            return new BrokerMessage(topic, payload, qos, (flags & RETAIN) != 0, publisherId, createdAtMillis,
                    expiry, payloadFormat, contentType, responseTopic, correlationData, properties);
        } catch (IllegalArgumentException e) {
            // Well-formed bytes, but values no publisher could have sent (empty topic, expiry out of range...).
            throw new MessageFormatException("decoded fields do not form a valid message: " + e.getMessage(), e);
        }
    }

    private static byte[] utf8(String s, String field) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    throw new IllegalArgumentException(field + " has an unpaired surrogate at index " + i
                            + " and cannot be encoded as UTF-8");
                }
            }
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int sizeOf(byte[] lengthPrefixed) {
        return varintSize(lengthPrefixed.length) + lengthPrefixed.length;
    }

    private static int varintSize(long value) {
        int size = 1;
        while ((value >>>= 7) != 0) {
            size++;
        }
        return size;
    }

    /** Writes into an array sized in advance, so a 1 MiB payload is copied once. */
    private static final class Writer {
        private final byte[] buf;
        private int pos;

        Writer(int size) {
            buf = new byte[size];
        }

        void writeByte(int b) {
            buf[pos++] = (byte) b;
        }

        void writeVarint(long value) {
            while ((value & ~0x7FL) != 0) {
                buf[pos++] = (byte) ((value & 0x7F) | 0x80);
                value >>>= 7;
            }
            buf[pos++] = (byte) value;
        }

        void writeBytes(byte[] b) {
            writeVarint(b.length);
            System.arraycopy(b, 0, buf, pos, b.length);
            pos += b.length;
        }

        byte[] finish() {
            if (pos != buf.length) {
                throw new IllegalStateException("encoder size calculation is off: wrote " + pos + " of " + buf.length);
            }
            return buf;
        }
    }

    /** Reads with a bounds check before every access, so bad input ends in a MessageFormatException. */
    private static final class Reader {
        private final byte[] buf;
        private int pos;

        Reader(byte[] buf) {
            this.buf = buf;
        }

        int position() {
            return pos;
        }

        int remaining() {
            return buf.length - pos;
        }

        int readByte(String field) throws MessageFormatException {
            if (pos >= buf.length) {
                throw truncated(field, 1);
            }
            return buf[pos++] & 0xFF;
        }

        long readVarint(int maxBytes, String field) throws MessageFormatException {
            long value = 0;
            for (int i = 0; i < maxBytes; i++) {
                if (pos >= buf.length) {
                    throw truncated(field, 1);
                }
                int b = buf[pos++] & 0xFF;
                value |= (long) (b & 0x7F) << (7 * i);
                if ((b & 0x80) == 0) {
                    return value;
                }
            }
            throw new MessageFormatException(field + " varint is longer than " + maxBytes + " bytes, ending at offset " + pos);
        }

        int readLength(String field) throws MessageFormatException {
            long length = readVarint(MAX_INT_VARINT_BYTES, field);
            if (length > Integer.MAX_VALUE) {
                throw new MessageFormatException(field + " " + length + " is out of range, ending at offset " + pos);
            }
            return (int) length;
        }

        byte[] readBytes(String field) throws MessageFormatException {
            int length = readLength(field + " length");
            if (length > remaining()) {
                throw truncated(field, length);
            }
            byte[] b = new byte[length];
            System.arraycopy(buf, pos, b, 0, length);
            pos += length;
            return b;
        }

        String readString(String field) throws MessageFormatException {
            int length = readLength(field + " length");
            if (length > remaining()) {
                throw truncated(field, length);
            }
            int start = pos;
            pos += length;
            String s = new String(buf, start, length, StandardCharsets.UTF_8);
            // The fast decoder substitutes U+FFFD for invalid input; only then is a strict check worth it,
            // as U+FFFD may also be a genuine character.
            if (s.indexOf('\uFFFD') >= 0) {
                try {
                    StandardCharsets.UTF_8.newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(ByteBuffer.wrap(buf, start, length));
                } catch (CharacterCodingException e) {
                    throw new MessageFormatException(field + " at offset " + start + " is not valid UTF-8", e);
                }
            }
            return s;
        }

        private MessageFormatException truncated(String field, int needed) {
            return new MessageFormatException("truncated: " + field + " needs " + needed + " byte(s) at offset " + pos
                    + " but only " + remaining() + " of " + buf.length + " are left");
        }
    }
}
