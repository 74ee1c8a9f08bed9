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
