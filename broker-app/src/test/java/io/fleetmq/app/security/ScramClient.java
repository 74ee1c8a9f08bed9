package io.fleetmq.app.security;

import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The client side of SCRAM (RFC 5802) over raw MQTT 5 packets, written from the RFC with the JDK's
 * PBKDF2, independent of the broker's code: builds the CONNECT and AUTH packets of an exchange and
 * checks the server's signature.
 */
final class ScramClient {

    private final String method;
    private final String hash;
    private final String password;
    private final String bare;
    private byte[] saltedPassword;
    private String authMessage;

    /** @param hash "SHA-256" or "SHA-512" */
    ScramClient(String hash, String username, String password) {
        this.method = "SCRAM-" + hash;
        this.hash = hash;
        this.password = password;
        this.bare = "n=" + username.replace("=", "=3D").replace(",", "=2C") + ",r="
                + UUID.randomUUID().toString().replace("-", "");
    }

    String method() {
        return method;
    }

    byte[] clientFirst() {
        return ("n,," + bare).getBytes(StandardCharsets.UTF_8);
    }

    /** An MQTT 5 CONNECT (clean start, keep alive 60) with this exchange's method and client-first. */
    byte[] connect(String clientId) {
        return connect(clientId, method, clientFirst());
    }

    static byte[] connect(String clientId, String method, byte[] data) {
        return RawMqtt.connect(5, true, 60, clientId, HexFormat.of().formatHex(properties(method, data)));
    }

    /** AUTH with {@code reason} (0x18 continue, 0x19 re-authenticate), a method and data. */
    static byte[] auth(int reason, String method, byte[] data) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(reason);
        body.writeBytes(properties(method, data));
        return RawMqtt.packet(0xF0, body.toByteArray());
    }

    private static byte[] properties(String method, byte[] data) {
        ByteArrayOutputStream props = new ByteArrayOutputStream();
        props.write(0x15);
        RawMqtt.writeString(props, method);
        if (data != null) {
            props.write(0x16);
            props.write(data.length >> 8);
            props.write(data.length & 0xFF);
            props.writeBytes(data);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RawMqtt.writeVariableByteInteger(out, props.size());
        out.writeBytes(props.toByteArray());
        return out.toByteArray();
    }

    /** client-final-message for the server's first message. */
    byte[] clientFinal(byte[] serverFirst) throws Exception {
        String sf = new String(serverFirst, StandardCharsets.UTF_8);
        String nonce = null;
        byte[] salt = null;
        int iterations = 0;
        for (String attribute : sf.split(",")) {
            switch (attribute.charAt(0)) {
                case 'r' -> nonce = attribute.substring(2);
                case 's' -> salt = Base64.getDecoder().decode(attribute.substring(2));
                case 'i' -> iterations = Integer.parseInt(attribute.substring(2));
                default -> { }
            }
        }
        String jca = hash.replace("-", "");
        saltedPassword = SecretKeyFactory.getInstance("PBKDF2WithHmac" + jca).generateSecret(
                new PBEKeySpec(password.toCharArray(), salt, iterations, "SHA-256".equals(hash) ? 256 : 512)).getEncoded();
        String withoutProof = "c=biws,r=" + nonce;
        authMessage = bare + "," + sf + "," + withoutProof;
        byte[] clientKey = hmac(saltedPassword, "Client Key");
        byte[] signature = hmac(MessageDigest.getInstance(hash).digest(clientKey), authMessage);
        for (int i = 0; i < clientKey.length; i++) {
            clientKey[i] ^= signature[i];
        }
        return (withoutProof + ",p=" + Base64.getEncoder().encodeToString(clientKey)).getBytes(StandardCharsets.UTF_8);
    }

    /** Whether server-final-message carries the signature only a server with this password's keys can make. */
    boolean serverVerified(byte[] serverFinal) throws Exception {
        byte[] expected = hmac(hmac(saltedPassword, "Server Key"), authMessage);
        return ("v=" + Base64.getEncoder().encodeToString(expected)).equals(new String(serverFinal, StandardCharsets.UTF_8));
    }

    private byte[] hmac(byte[] key, String data) throws Exception {
        String name = "Hmac" + hash.replace("-", "");
        Mac mac = Mac.getInstance(name);
        mac.init(new SecretKeySpec(key, name));
        return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    }

    /** An AUTH packet as received: reason code, method, data. */
    record Auth(int reason, String method, byte[] data) {

        static Auth parse(byte[] packet) {
            int pos = 1;
            while ((packet[pos] & 0x80) != 0) {
                pos++;
            }
            pos++;
            if (pos == packet.length) {
                return new Auth(0, null, null);
            }
            int reason = packet[pos++] & 0xFF;
            int length = 0;
            int shift = 0;
            int digit;
            do {
                digit = packet[pos++] & 0xFF;
                length |= (digit & 0x7F) << shift;
                shift += 7;
            } while ((digit & 0x80) != 0);
            int end = pos + length;
            String method = null;
            byte[] data = null;
            while (pos < end) {
                int id = packet[pos++] & 0xFF;
                int len = (packet[pos] & 0xFF) << 8 | packet[pos + 1] & 0xFF;
                pos += 2;
                byte[] value = java.util.Arrays.copyOfRange(packet, pos, pos + len);
                pos += len;
                if (id == 0x15) {
                    method = new String(value, StandardCharsets.UTF_8);
                } else if (id == 0x16) {
                    data = value;
                } else if (id != 0x1F) {
                    throw new IllegalStateException("unexpected AUTH property 0x" + Integer.toHexString(id));
                }
            }
            return new Auth(reason, method, data);
        }
    }

    /** Reads the next AUTH packet from {@code raw}. */
    static Auth readAuth(RawMqtt raw) throws IOException {
        return Auth.parse(raw.readType(15));
    }
}
