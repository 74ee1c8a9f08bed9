package io.fleetmq.bench.client;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The client side of SCRAM (RFC 5802, SHA-256 per RFC 7677, and SHA-512), for MQTT 5 enhanced
 * authentication: one instance per run holds the user name and password, and {@link #begin()} starts
 * one exchange per handshake.
 *
 * <p>The keys derived from the password are kept per salt and iteration count, as RFC 5802 section 5.1
 * allows a client to: the broker sends the same salt to the same user every time, so only the first
 * handshake pays the PBKDF2 iterations. Otherwise the load generator, on the broker's machine, would
 * spend more CPU per handshake than the broker does.
 *
 * <p>Passwords are used as their UTF-8 bytes without SASLprep, which is the same for ASCII passwords,
 * the only ones a benchmark needs. Channel binding is not offered (GS2 header {@code n,,}).
 */
public final class Scram {

    /** The mechanisms a broker may offer, by their MQTT Authentication Method. */
    public enum Algorithm {
        SHA_256("SCRAM-SHA-256", "HmacSHA256", "SHA-256", "PBKDF2WithHmacSHA256", 256),
        SHA_512("SCRAM-SHA-512", "HmacSHA512", "SHA-512", "PBKDF2WithHmacSHA512", 512);

        private final String method;
        private final String hmac;
        private final String digest;
        private final String pbkdf2;
        private final int bits;

        Algorithm(String method, String hmac, String digest, String pbkdf2, int bits) {
            this.method = method;
            this.hmac = hmac;
            this.digest = digest;
            this.pbkdf2 = pbkdf2;
            this.bits = bits;
        }

        /** The Authentication Method property, e.g. {@code SCRAM-SHA-256}. */
        public String method() {
            return method;
        }

        public static Algorithm parse(String text) {
            return switch (text.trim().toUpperCase(Locale.ROOT)) {
                case "SCRAM-SHA-256" -> SHA_256;
                case "SCRAM-SHA-512" -> SHA_512;
                default -> throw new IllegalArgumentException("unknown method '" + text
                        + "': use SCRAM-SHA-256 or SCRAM-SHA-512");
            };
        }
    }

    /** A server asking for more is misconfigured or hostile: the client would burn seconds per handshake. */
    static final int MAX_ITERATIONS = 1_000_000;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Algorithm algorithm;
    private final String username;
    private final String password;
    /** ClientKey and ServerKey by "salt,iterations". */
    private final Map<String, Keys> keys = new ConcurrentHashMap<>();

    public Scram(Algorithm algorithm, String username, String password) {
        this.algorithm = algorithm;
        this.username = username;
        this.password = password;
    }

    public Algorithm algorithm() {
        return algorithm;
    }

    /** A new exchange with a random 24-byte nonce. */
    public Exchange begin() {
        byte[] nonce = new byte[24];
        RANDOM.nextBytes(nonce);
        return begin(Base64.getEncoder().encodeToString(nonce));
    }

    /** A new exchange with the given nonce (printable ASCII without ','): for tests against known vectors. */
    public Exchange begin(String clientNonce) {
        return new Exchange(clientNonce);
    }

    private record Keys(byte[] clientKey, byte[] storedKey, byte[] serverKey) {
    }

    /** One authentication: client-first, then client-final from server-first, then the server's proof. */
    public final class Exchange {

        private final String clientNonce;
        private final String clientFirstBare;
        private byte[] expectedServerSignature;

        private Exchange(String clientNonce) {
            this.clientNonce = clientNonce;
            this.clientFirstBare = "n=" + username.replace("=", "=3D").replace(",", "=2C") + ",r=" + clientNonce;
        }

        /** The Authentication Data of the CONNECT. */
        public byte[] clientFirst() {
            return ("n,," + clientFirstBare).getBytes(StandardCharsets.UTF_8);
        }

        /**
         * The Authentication Data of the client's AUTH answer.
         *
         * @throws IllegalArgumentException when server-first is malformed, does not extend this client's
         *                                  nonce, or asks for an unreasonable iteration count
         */
        public byte[] clientFinal(byte[] serverFirstBytes) {
            String serverFirst = new String(serverFirstBytes, StandardCharsets.UTF_8);
            String nonce = null;
            String salt = null;
            int iterations = 0;
            for (String attribute : serverFirst.split(",")) {
                if (attribute.startsWith("r=")) {
                    nonce = attribute.substring(2);
                } else if (attribute.startsWith("s=")) {
                    salt = attribute.substring(2);
                } else if (attribute.startsWith("i=")) {
                    iterations = Integer.parseInt(attribute.substring(2));
                } else if (attribute.startsWith("m=")) {
                    throw new IllegalArgumentException("server-first asks for a mandatory extension");
                }
            }
            if (nonce == null || salt == null || !nonce.startsWith(clientNonce) || nonce.length() == clientNonce.length()) {
                throw new IllegalArgumentException("server-first lacks a nonce extending ours or a salt: " + serverFirst);
            }
            if (iterations < 1 || iterations > MAX_ITERATIONS) {
                throw new IllegalArgumentException("server-first asks for " + iterations + " iterations");
            }
            int i = iterations;
            String s = salt;
            Keys k = keys.computeIfAbsent(s + "," + i, key -> derive(Base64.getDecoder().decode(s), i));
            String withoutProof = "c=biws,r=" + nonce;
            byte[] authMessage = (clientFirstBare + "," + serverFirst + "," + withoutProof)
                    .getBytes(StandardCharsets.UTF_8);
            byte[] proof = hmac(k.storedKey(), authMessage);
            for (int b = 0; b < proof.length; b++) {
                proof[b] ^= k.clientKey()[b];
            }
            expectedServerSignature = hmac(k.serverKey(), authMessage);
            return (withoutProof + ",p=" + Base64.getEncoder().encodeToString(proof)).getBytes(StandardCharsets.UTF_8);
        }

        /** Whether server-final ({@code v=<ServerSignature>}) proves the server holds this user's keys. */
        public boolean serverVerified(byte[] serverFinalBytes) {
            if (expectedServerSignature == null || serverFinalBytes == null) {
                return false;
            }
            String serverFinal = new String(serverFinalBytes, StandardCharsets.UTF_8);
            if (!serverFinal.startsWith("v=")) {
                return false;
            }
            int end = serverFinal.indexOf(',');
            byte[] signature;
            try {
                signature = Base64.getDecoder().decode(serverFinal.substring(2, end < 0 ? serverFinal.length() : end));
            } catch (IllegalArgumentException e) {
                return false;
            }
            return MessageDigest.isEqual(expectedServerSignature, signature);
        }
    }

    private Keys derive(byte[] salt, int iterations) {
        try {
            // PBKDF2 with one block of output is RFC 5802's Hi(); the JDK takes the password as chars
            // and encodes them as UTF-8 itself.
            byte[] salted = SecretKeyFactory.getInstance(algorithm.pbkdf2)
                    .generateSecret(new PBEKeySpec(password.toCharArray(), salt, iterations, algorithm.bits)).getEncoded();
            byte[] clientKey = hmac(salted, "Client Key".getBytes(StandardCharsets.UTF_8));
            byte[] storedKey = MessageDigest.getInstance(algorithm.digest).digest(clientKey);
            byte[] serverKey = hmac(salted, "Server Key".getBytes(StandardCharsets.UTF_8));
            return new Keys(clientKey, storedKey, serverKey);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(algorithm.method + " is not available in this JDK", e);
        }
    }

    private byte[] hmac(byte[] key, byte[] data) {
        try {
            Mac mac = Mac.getInstance(algorithm.hmac);
            mac.init(new SecretKeySpec(key, algorithm.hmac));
            return mac.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(algorithm.method + " is not available in this JDK", e);
        }
    }
}
