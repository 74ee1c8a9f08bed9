package io.fleetmq.transport.mqtt;

import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.transport.limits.ConnectionLimits;
import io.fleetmq.transport.limits.NodeLimits;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;

/**
 * Reads the fields of one packet for {@link MqttPacketValidator}, never past the packet's end;
 * every overrun is a malformed packet. Knows the properties of MQTT 5 (Table 2-4): which packet
 * may carry which, which may repeat, and the value ranges that are protocol errors; and counts
 * user properties against the node's limits.
 */
final class PacketReader {

    private static final int USER_PROPERTY = 0x26;
    private static final int SUBSCRIPTION_IDENTIFIER = 0x0B;

    /** Where a property appears; the client-to-server packets only (a client sends no CONNACK, SUBACK, ...). */
    enum Kind { CONNECT, WILL, PUBLISH, ACK, SUBSCRIBE, UNSUBSCRIBE, DISCONNECT, AUTH }

    private enum DataType { BYTE, TWO_BYTES, FOUR_BYTES, VARIABLE_BYTE_INTEGER, STRING, BINARY, STRING_PAIR }

    private record Rule(String name, DataType type, EnumSet<Kind> allowedIn) {
    }

    /** Table 2-4 (Properties), by identifier; null for identifiers the specification does not define. */
    private static final Rule[] RULES = new Rule[0x2B];

    static {
        rule(0x01, "Payload Format Indicator", DataType.BYTE, Kind.PUBLISH, Kind.WILL);
        rule(0x02, "Message Expiry Interval", DataType.FOUR_BYTES, Kind.PUBLISH, Kind.WILL);
        rule(0x03, "Content Type", DataType.STRING, Kind.PUBLISH, Kind.WILL);
        rule(0x08, "Response Topic", DataType.STRING, Kind.PUBLISH, Kind.WILL);
        rule(0x09, "Correlation Data", DataType.BINARY, Kind.PUBLISH, Kind.WILL);
        rule(SUBSCRIPTION_IDENTIFIER, "Subscription Identifier", DataType.VARIABLE_BYTE_INTEGER,
                Kind.PUBLISH, Kind.SUBSCRIBE);
        rule(0x11, "Session Expiry Interval", DataType.FOUR_BYTES, Kind.CONNECT, Kind.DISCONNECT);
        rule(0x12, "Assigned Client Identifier", DataType.STRING);
        rule(0x13, "Server Keep Alive", DataType.TWO_BYTES);
        rule(0x15, "Authentication Method", DataType.STRING, Kind.CONNECT, Kind.AUTH);
        rule(0x16, "Authentication Data", DataType.BINARY, Kind.CONNECT, Kind.AUTH);
        rule(0x17, "Request Problem Information", DataType.BYTE, Kind.CONNECT);
        rule(0x18, "Will Delay Interval", DataType.FOUR_BYTES, Kind.WILL);
        rule(0x19, "Request Response Information", DataType.BYTE, Kind.CONNECT);
        rule(0x1A, "Response Information", DataType.STRING);
        rule(0x1C, "Server Reference", DataType.STRING, Kind.DISCONNECT);
        rule(0x1F, "Reason String", DataType.STRING, Kind.ACK, Kind.DISCONNECT, Kind.AUTH);
        rule(0x21, "Receive Maximum", DataType.TWO_BYTES, Kind.CONNECT);
        rule(0x22, "Topic Alias Maximum", DataType.TWO_BYTES, Kind.CONNECT);
        rule(0x23, "Topic Alias", DataType.TWO_BYTES, Kind.PUBLISH);
        rule(0x24, "Maximum QoS", DataType.BYTE);
        rule(0x25, "Retain Available", DataType.BYTE);
        rule(USER_PROPERTY, "User Property", DataType.STRING_PAIR, Kind.values());
        rule(0x27, "Maximum Packet Size", DataType.FOUR_BYTES, Kind.CONNECT);
        rule(0x28, "Wildcard Subscription Available", DataType.BYTE);
        rule(0x29, "Subscription Identifier Available", DataType.BYTE);
        rule(0x2A, "Shared Subscription Available", DataType.BYTE);
    }

    private static void rule(int id, String name, DataType type, Kind... allowedIn) {
        EnumSet<Kind> kinds = EnumSet.noneOf(Kind.class);
        kinds.addAll(List.of(allowedIn));
        RULES[id] = new Rule(name, type, kinds);
    }


    private final ByteBuf buf;
    private int pos;
    private int limit;
    ProtocolVersion connectVersion;
    private final ConnectionLimits limits;
    private int userProperties;
    private long userPropertyBytes;

    PacketReader(ByteBuf buf, int pos, int limit, ProtocolVersion connectVersion, ConnectionLimits limits) {
        this.buf = buf;
        this.pos = pos;
        this.limit = limit;
        this.connectVersion = connectVersion;
        this.limits = limits;
    }

    int remaining() {
        return limit - pos;
    }

    InvalidPacketException malformed(String message) {
        return new InvalidPacketException(ReasonCode.MALFORMED_PACKET, message, connectVersion);
    }

    InvalidPacketException protocolError(String message) {
        return new InvalidPacketException(ReasonCode.PROTOCOL_ERROR, message, connectVersion);
    }

    private void need(int bytes, String what) {
        if (bytes > remaining()) {
            throw malformed(what + " runs past the end of the packet (Remaining Length too short)");
        }
    }

    void skip(int bytes, String what) {
        need(bytes, what);
        pos += bytes;
    }

    int u8(String what) {
        need(1, what);
        return buf.getUnsignedByte(pos++);
    }

    int u16(String what) {
        need(2, what);
        int v = buf.getUnsignedShort(pos);
        pos += 2;
        return v;
    }

    long variableByteInteger(String what) {
        long value = 0;
        int multiplier = 1;
        for (int i = 0; i < 4; i++) {
            int digit = u8(what);
            value += (long) (digit & 0x7F) * multiplier;
            if ((digit & 0x80) == 0) {
                return value;
            }
            multiplier *= 128;
        }
        throw malformed(what + " longer than four bytes"); // 1.5.5
    }

    void binary(String what) {
        skip(u16(what), what);
    }

    void string(String what) {
        int length = u16(what);
        need(length, what);
        String problem = utf8Problem(buf, pos, pos + length);
        if (problem != null) {
            throw malformed(what + " is not a valid UTF-8 string: " + problem); // [MQTT-1.5.4-1] [MQTT-1.5.4-2]
        }
        pos += length;
    }

    String protocolName() {
        int length = u16("Protocol Name");
        need(length, "Protocol Name");
        String name = buf.toString(pos, length, StandardCharsets.UTF_8);
        pos += length;
        return name;
    }

    void end() {
        if (remaining() != 0) {
            throw malformed(remaining() + " bytes after the last field (Remaining Length too long)");
        }
    }

    void properties(Kind kind) {
        long length = variableByteInteger("Property Length");
        if (length > remaining()) {
            throw malformed("Property Length runs past the end of the packet");
        }
        int outerLimit = limit;
        limit = pos + (int) length;
        long seen = 0;
        while (pos < limit) {
            long id = variableByteInteger("Property Identifier");
            Rule rule = id < RULES.length ? RULES[(int) id] : null;
            if (rule == null) {
                throw malformed("unknown property identifier 0x" + Long.toHexString(id)); // 2.2.2.2
            }
            if (!rule.allowedIn().contains(kind)) {
                throw malformed(rule.name() + " is not allowed in " + describe(kind)); // 2.2.2.2
            }
            boolean repeatable = id == USER_PROPERTY || id == SUBSCRIPTION_IDENTIFIER && kind == Kind.PUBLISH;
            if (!repeatable) {
                if ((seen & (1L << id)) != 0) {
                    // Each property's own section: "It is a Protocol Error to include the ... more than once."
                    throw protocolError(rule.name() + " more than once in " + describe(kind));
                }
                seen |= 1L << id;
            }
            value((int) id, rule, kind);
        }
        limit = outerLimit;
    }

    private void value(int id, Rule rule, Kind kind) {
        switch (rule.type()) {
            case BYTE -> {
                int v = u8(rule.name());
                if (v > 1) {
                    // Payload Format Indicator, Request Problem / Response Information: 0 or 1 only.
                    throw protocolError(rule.name() + " of " + v + " in " + describe(kind));
                }
            }
            case TWO_BYTES -> u16(rule.name());
            case FOUR_BYTES -> skip(4, rule.name());
            case VARIABLE_BYTE_INTEGER -> {
                long v = variableByteInteger(rule.name());
                if (id == SUBSCRIPTION_IDENTIFIER && v == 0) {
                    throw protocolError("Subscription Identifier 0"); // 3.8.2.1.2: a value of 0 is a Protocol Error
                }
            }
            case STRING -> string(rule.name());
            case BINARY -> binary(rule.name());
            case STRING_PAIR -> {
                int start = pos;
                string(rule.name() + " name");
                string(rule.name() + " value");
                userProperty(pos - start - 4);
            }
        }
    }

    /** Counts one user property of {@code bytes} (name and value) against the limits per packet. */
    private void userProperty(int bytes) {
        userProperties++;
        userPropertyBytes += bytes;
        if (userProperties > limits.maxUserProperties()) {
            throw new InvalidPacketException(ReasonCode.QUOTA_EXCEEDED, "more than " + limits.maxUserProperties()
                    + " user properties in one packet", connectVersion, NodeLimits.USER_PROPERTIES);
        }
        if (userPropertyBytes > limits.maxUserPropertyBytes()) {
            throw new InvalidPacketException(ReasonCode.QUOTA_EXCEEDED, "user properties of more than "
                    + limits.maxUserPropertyBytes() + " bytes in one packet", connectVersion,
                    NodeLimits.USER_PROPERTY_BYTES);
        }
    }

    private static String describe(Kind kind) {
        return kind == Kind.WILL ? "the will properties" : kind == Kind.ACK ? "an acknowledgement"
                : kind.name().toUpperCase(Locale.ROOT);
    }

    /**
     * Why bytes {@code from} to {@code to} are not a UTF-8 Encoded String of MQTT (1.5.4), or null:
     * ill-formed sequences, overlong forms, surrogates and U+0000 are refused.
     */
    static String utf8Problem(ByteBuf b, int from, int to) {
        int i = from;
        while (i < to) {
            int c = b.getUnsignedByte(i);
            if (c < 0x80) {
                if (c == 0) {
                    return "contains U+0000";
                }
                i++;
                continue;
            }
            int extra;
            int cp;
            if (c >= 0xC2 && c <= 0xDF) {
                extra = 1;
                cp = c & 0x1F;
            } else if (c >= 0xE0 && c <= 0xEF) {
                extra = 2;
                cp = c & 0x0F;
            } else if (c >= 0xF0 && c <= 0xF4) {
                extra = 3;
                cp = c & 0x07;
            } else {
                return "byte 0x" + Integer.toHexString(c) + " cannot start a character";
            }
            if (i + extra >= to) {
                return "truncated character at the end";
            }
            for (int k = 1; k <= extra; k++) {
                int cc = b.getUnsignedByte(i + k);
                if ((cc & 0xC0) != 0x80) {
                    return "byte 0x" + Integer.toHexString(cc) + " is not a continuation byte";
                }
                cp = cp << 6 | cc & 0x3F;
            }
            if (extra == 2 && (cp < 0x800 || cp >= 0xD800 && cp <= 0xDFFF)
                    || extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)) {
                return "overlong form, surrogate or code point out of range (U+" + Integer.toHexString(cp) + ")";
            }
            i += extra + 1;
        }
        return null;
    }
}
