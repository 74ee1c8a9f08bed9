package io.fleetmq.testkit;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.HexFormat;

/**
 * An MQTT peer that speaks raw bytes, for what real client libraries refuse to send: malformed
 * packets, protocol violations, exact reason codes. Reads whole packets (fixed header, remaining
 * length, body).
 */
public final class RawMqtt implements AutoCloseable {

    private final Socket socket;
    private final DataInputStream in;

    private RawMqtt(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
    }

    public static RawMqtt connect(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        return new RawMqtt(socket);
    }

    /** Speaks over a socket the caller connected, such as a TLS socket after its handshake. */
    public static RawMqtt over(Socket socket) throws IOException {
        socket.setSoTimeout(10_000);
        return new RawMqtt(socket);
    }

    /**
     * Connects with a small socket receive buffer, for a peer that stops reading: the broker's
     * writes then back up after a few kilobytes instead of filling the kernel's default buffers.
     */
    public static RawMqtt connectWithReceiveBuffer(int port, int receiveBufferBytes) throws IOException {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(receiveBufferBytes); // before connecting, so the TCP window is small
        socket.connect(new java.net.InetSocketAddress("127.0.0.1", port), 10_000);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        return new RawMqtt(socket);
    }

    public RawMqtt send(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
        return this;
    }

    public RawMqtt sendHex(String hex) throws IOException {
        return send(HexFormat.of().parseHex(hex.replace(" ", "")));
    }

    /** The next whole packet, or null if the broker closed the connection. */
    public byte[] read() throws IOException {
        int first;
        try {
            first = in.read();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no packet from the broker within the socket timeout", e);
        }
        if (first < 0) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(first);
        int remaining = 0;
        int multiplier = 1;
        int b;
        do {
            b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed inside a fixed header");
            }
            out.write(b);
            remaining += (b & 0x7F) * multiplier;
            multiplier *= 128;
        } while ((b & 0x80) != 0);
        byte[] body = new byte[remaining];
        in.readFully(body);
        out.write(body);
        return out.toByteArray();
    }

    /** What {@link #readWithin} returns when no packet started in time. */
    public static final byte[] NOTHING = new byte[0];

    /**
     * The next whole packet if one starts within {@code millis}; {@link #NOTHING} if none did (the
     * connection is still usable); null if the broker closed the connection.
     */
    public byte[] readWithin(int millis) throws IOException {
        int before = socket.getSoTimeout();
        socket.setSoTimeout(millis);
        try {
            return read();
        } catch (AssertionError e) {
            if (e.getCause() instanceof SocketTimeoutException) {
                return NOTHING;
            }
            throw e;
        } finally {
            socket.setSoTimeout(before);
        }
    }

    /**
     * Reads packets until one whose type (the first byte's high nibble) is {@code type}, skipping
     * others (a PUBLISH while waiting for SUBACK, ...); fails if the broker closes first.
     */
    public byte[] readType(int type) throws IOException {
        while (true) {
            byte[] p = read();
            if (p == null) {
                throw new AssertionError("connection closed while waiting for packet type " + type);
            }
            if ((p[0] & 0xF0) >> 4 == type) {
                return p;
            }
        }
    }

    public String readHex() throws IOException {
        byte[] p = read();
        return p == null ? null : HexFormat.of().formatHex(p);
    }

    public void socketTimeout(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    /** True if nothing arrives before the socket timeout (and the connection stays open). */
    public boolean nothingWithin() throws IOException {
        try {
            int b = in.read();
            if (b < 0) {
                throw new AssertionError("connection closed by the broker");
            }
            return false;
        } catch (SocketTimeoutException e) {
            return true;
        }
    }

    /** True once the broker closed the connection (reading until end of stream). */
    public boolean closedByBroker() throws IOException {
        try {
            while (true) {
                if (in.read() < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset by peer
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** An MQTT 5 CONNECT with clean start, keep alive 60 s, no properties. */
    public static byte[] connectV5(String clientId) {
        return connect(5, clientId, "00");
    }

    /** An MQTT 3.1.1 CONNECT with clean session, keep alive 60 s. */
    public static byte[] connectV311(String clientId) {
        return connect(4, clientId, null);
    }

    /** A CONNECT with the given protocol level and, for level 5, the properties as hex (length included). */
    public static byte[] connect(int level, String clientId, String propertiesHex) {
        return connect(level, true, 60, clientId, propertiesHex);
    }

    /** A CONNECT without will or credentials; properties as hex with their length byte, null for 3.1.1. */
    public static byte[] connect(int level, boolean cleanStart, int keepAliveSeconds, String clientId,
                                 String propertiesHex) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        writeString(body, "MQTT");
        body.write(level);
        body.write(cleanStart ? 0x02 : 0x00);
        body.write(keepAliveSeconds >> 8);
        body.write(keepAliveSeconds & 0xFF);
        if (propertiesHex != null) {
            body.writeBytes(HexFormat.of().parseHex(propertiesHex.replace(" ", "")));
        }
        writeString(body, clientId);
        return packet(0x10, body.toByteArray());
    }

    /**
     * A CONNECT with clean start, keep alive 60 s, no properties, and a user name and password
     * (either may be null: then its flag is not set).
     */
    public static byte[] connectWithCredentials(int level, String clientId, String username, byte[] password) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        writeString(body, "MQTT");
        body.write(level);
        body.write(0x02 | (username != null ? 0x80 : 0) | (password != null ? 0x40 : 0));
        body.write(0);
        body.write(60);
        if (level == 5) {
            body.write(0); // no properties
        }
        writeString(body, clientId);
        if (username != null) {
            writeString(body, username);
        }
        if (password != null) {
            body.write(password.length >> 8);
            body.write(password.length & 0xFF);
            body.writeBytes(password);
        }
        return packet(0x10, body.toByteArray());
    }

    /** An MQTT 5 SUBSCRIBE of one filter with options byte {@code options} (QoS in the low bits). */
    public static byte[] subscribeV5(int packetId, String filter, int options) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(packetId >> 8);
        body.write(packetId & 0xFF);
        body.write(0); // no properties
        writeString(body, filter);
        body.write(options);
        return packet(0x82, body.toByteArray());
    }

    /** An MQTT 5 PUBLISH without properties. */
    public static byte[] publishV5(String topic, int qos, int packetId, byte[] payload) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        writeString(body, topic);
        if (qos > 0) {
            body.write(packetId >> 8);
            body.write(packetId & 0xFF);
        }
        body.write(0);
        body.writeBytes(payload);
        return packet(0x30 | qos << 1, body.toByteArray());
    }

    /** PUBACK, PUBREC, PUBREL (type byte 0x62) or PUBCOMP with success and no properties. */
    public static byte[] ack(int firstByte, int packetId) {
        return packet(firstByte, new byte[] {(byte) (packetId >> 8), (byte) packetId});
    }

    /** The packet identifier of a received QoS 1/2 MQTT PUBLISH (after the topic). */
    public static int publishPacketId(byte[] publish) {
        int offset = 1;
        while ((publish[offset] & 0x80) != 0) {
            offset++;
        }
        offset++;
        int topicLength = (publish[offset] & 0xFF) << 8 | publish[offset + 1] & 0xFF;
        int at = offset + 2 + topicLength;
        return (publish[at] & 0xFF) << 8 | publish[at + 1] & 0xFF;
    }

    /** The topic of a received PUBLISH (empty when only a topic alias was sent). */
    public static String publishTopic(byte[] publish) {
        int offset = 1;
        while ((publish[offset] & 0x80) != 0) {
            offset++;
        }
        offset++;
        int topicLength = (publish[offset] & 0xFF) << 8 | publish[offset + 1] & 0xFF;
        return new String(publish, offset + 2, topicLength, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** An MQTT 5 PUBLISH with properties given as hex, without their length (which is added). */
    public static byte[] publishV5(String topic, int qos, int packetId, String propertiesHex, byte[] payload) {
        byte[] props = HexFormat.of().parseHex(propertiesHex.replace(" ", ""));
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        writeString(body, topic);
        if (qos > 0) {
            body.write(packetId >> 8);
            body.write(packetId & 0xFF);
        }
        writeVariableByteInteger(body, props.length);
        body.writeBytes(props);
        body.writeBytes(payload);
        return packet(0x30 | qos << 1, body.toByteArray());
    }

    /** An MQTT 5 SUBSCRIBE of one filter carrying Subscription Identifier {@code subscriptionId}. */
    public static byte[] subscribeV5(int packetId, int subscriptionId, String filter, int options) {
        ByteArrayOutputStream props = new ByteArrayOutputStream();
        props.write(0x0B);
        writeVariableByteInteger(props, subscriptionId);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(packetId >> 8);
        body.write(packetId & 0xFF);
        writeVariableByteInteger(body, props.size());
        body.writeBytes(props.toByteArray());
        writeString(body, filter);
        body.write(options);
        return packet(0x82, body.toByteArray());
    }

    /** An MQTT 5 CONNECT with a will (QoS 0, no will properties), clean start, the given CONNECT properties as hex. */
    public static byte[] connectV5WithWill(String clientId, int keepAliveSeconds, String propertiesHex,
                                           String willPropertiesHex, String willTopic, byte[] willPayload) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        writeString(body, "MQTT");
        body.write(5);
        body.write(0x06); // will flag, clean start
        body.write(keepAliveSeconds >> 8);
        body.write(keepAliveSeconds & 0xFF);
        byte[] props = HexFormat.of().parseHex(propertiesHex.replace(" ", ""));
        writeVariableByteInteger(body, props.length);
        body.writeBytes(props);
        writeString(body, clientId);
        byte[] willProps = HexFormat.of().parseHex(willPropertiesHex.replace(" ", ""));
        writeVariableByteInteger(body, willProps.length);
        body.writeBytes(willProps);
        writeString(body, willTopic);
        body.write(willPayload.length >> 8);
        body.write(willPayload.length & 0xFF);
        body.writeBytes(willPayload);
        return packet(0x10, body.toByteArray());
    }

    /** A received MQTT 5 PUBLISH, taken apart. */
    public record Publish(boolean dup, int qos, boolean retain, String topic, int packetId, Properties properties,
                          byte[] payload) {
    }

    /** Parses an MQTT 5 PUBLISH as read by {@link #read()}. */
    public static Publish parsePublishV5(byte[] packet) {
        Cursor c = new Cursor(packet);
        int first = packet[0] & 0xFF;
        int qos = (first >> 1) & 0x03;
        String topic = c.string();
        int packetId = qos > 0 ? c.u16() : 0;
        Properties props = c.properties();
        byte[] payload = java.util.Arrays.copyOfRange(packet, c.pos, packet.length);
        return new Publish((first & 0x08) != 0, qos, (first & 0x01) != 0, topic, packetId, props, payload);
    }

    /** A received MQTT 5 CONNACK, taken apart. */
    public record ConnAck(boolean sessionPresent, int reasonCode, Properties properties) {
    }

    public static ConnAck parseConnAckV5(byte[] packet) {
        Cursor c = new Cursor(packet);
        int flags = c.u8();
        int code = c.u8();
        Properties props = c.remaining() > 0 ? c.properties() : new Properties(java.util.Map.of());
        return new ConnAck((flags & 0x01) != 0, code, props);
    }

    /**
     * MQTT 5 properties by identifier, in the order received: numbers as {@link Long}, strings as
     * {@link String}, binary data as {@code byte[]}, user properties as "name=value".
     */
    public record Properties(java.util.Map<Integer, java.util.List<Object>> byId) {

        public java.util.List<Object> all(int id) {
            return byId.getOrDefault(id, java.util.List.of());
        }

        public boolean has(int id) {
            return byId.containsKey(id);
        }

        /** The single value of {@code id}, or null when absent. */
        public Object get(int id) {
            java.util.List<Object> values = all(id);
            return values.isEmpty() ? null : values.get(0);
        }
    }

    /** Reads the fields after a fixed header. */
    private static final class Cursor {
        private final byte[] b;
        private int pos;

        Cursor(byte[] packet) {
            b = packet;
            pos = 1;
            while ((b[pos] & 0x80) != 0) {
                pos++;
            }
            pos++;
        }

        int remaining() {
            return b.length - pos;
        }

        int u8() {
            return b[pos++] & 0xFF;
        }

        int u16() {
            return u8() << 8 | u8();
        }

        long u32() {
            return (long) u16() << 16 | u16();
        }

        long varInt() {
            long value = 0;
            int multiplier = 1;
            int digit;
            do {
                digit = u8();
                value += (long) (digit & 0x7F) * multiplier;
                multiplier *= 128;
            } while ((digit & 0x80) != 0);
            return value;
        }

        String string() {
            int len = u16();
            String s = new String(b, pos, len, java.nio.charset.StandardCharsets.UTF_8);
            pos += len;
            return s;
        }

        byte[] binary() {
            int len = u16();
            byte[] out = java.util.Arrays.copyOfRange(b, pos, pos + len);
            pos += len;
            return out;
        }

        Properties properties() {
            long length = varInt();
            long end = pos + length;
            java.util.Map<Integer, java.util.List<Object>> byId = new java.util.LinkedHashMap<>();
            while (pos < end) {
                int id = (int) varInt();
                Object value = switch (id) {
                    case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A -> (long) u8();
                    case 0x13, 0x21, 0x22, 0x23 -> (long) u16();
                    case 0x02, 0x11, 0x18, 0x27 -> u32();
                    case 0x0B -> varInt();
                    case 0x09, 0x16 -> binary();
                    case 0x26 -> string() + "=" + string();
                    default -> string();
                };
                byId.computeIfAbsent(id, k -> new java.util.ArrayList<>()).add(value);
            }
            return new Properties(byId);
        }
    }

    public static void writeVariableByteInteger(ByteArrayOutputStream out, int value) {
        do {
            int digit = value % 128;
            value /= 128;
            out.write(value > 0 ? digit | 0x80 : digit);
        } while (value > 0);
    }

    /** Fixed header byte, remaining length, body. */
    public static byte[] packet(int firstByte, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(firstByte);
        int len = body.length;
        do {
            int digit = len % 128;
            len /= 128;
            out.write(len > 0 ? digit | 0x80 : digit);
        } while (len > 0);
        out.writeBytes(body);
        return out.toByteArray();
    }

    public static void writeString(ByteArrayOutputStream out, String s) {
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.write(b.length >> 8);
        out.write(b.length & 0xFF);
        out.writeBytes(b);
    }
}
