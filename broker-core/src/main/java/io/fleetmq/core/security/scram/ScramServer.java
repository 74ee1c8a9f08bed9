package io.fleetmq.core.security.scram;

import io.fleetmq.core.security.scram.ScramException.Kind;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * The server side of a SCRAM exchange (RFC 5802, RFC 7677), without I/O: the caller looks the
 * user's {@link ScramKeys} up between the client's first message and the server's answer.
 *
 * <pre>
 * client-first   n,,n=user,r=CLIENTNONCE
 * server-first   r=CLIENTNONCE SERVERNONCE,s=SALT,i=4096
 * client-final   c=biws,r=CLIENTNONCE SERVERNONCE,p=PROOF
 * server-final   v=SERVERSIGNATURE
 * </pre>
 *
 * Channel binding is not offered (the broker announces no -PLUS mechanism), so the GS2 header must
 * be {@code n,,} and the channel binding attribute {@code c=biws}; an authorization identity is
 * not supported either.
 */
public final class ScramServer {

    /** The only GS2 header accepted: no channel binding, no authorization identity. */
    static final String GS2_HEADER = "n,,";
    private static final String CHANNEL_BINDING = Base64.getEncoder().encodeToString(
            GS2_HEADER.getBytes(StandardCharsets.US_ASCII)); // "biws"
    private static final int NONCE_BYTES = 18;
    private static final SecureRandom RANDOM = new SecureRandom();

    private ScramServer() {
    }

    /**
     * The client's first message.
     *
     * @param username    the user name, unescaped ({@code =2C} and {@code =3D} back to {@code ,} and {@code =})
     * @param clientNonce the client's part of the nonce
     * @param bare        the message without its GS2 header, as it goes into the AuthMessage
     */
    public record ClientFirst(String username, String clientNonce, String bare) {
    }

    /** Reads client-first-message (RFC 5802 7). */
    public static ClientFirst parseClientFirst(byte[] message) throws ScramException {
        String m = text(message, "client-first-message");
        if (m.startsWith("p=")) {
            throw new ScramException(Kind.UNSUPPORTED, "channel binding is not supported");
        }
        if (!m.startsWith(GS2_HEADER)) {
            throw new ScramException(m.startsWith("n,a=") || m.startsWith("y,")
                    ? Kind.UNSUPPORTED : Kind.MALFORMED, "GS2 header must be 'n,,'");
        }
        String bare = m.substring(GS2_HEADER.length());
        String[] attributes = bare.split(",", -1);
        if (attributes.length < 2) {
            throw new ScramException(Kind.MALFORMED, "client-first-message needs n= and r=");
        }
        if (attributes[0].startsWith("m=")) {
            throw new ScramException(Kind.UNSUPPORTED, "mandatory extension m= is not supported"); // RFC 5802 5.1
        }
        String username = unescapeUsername(value(attributes[0], 'n'));
        String nonce = value(attributes[1], 'r');
        checkNonce(nonce);
        return new ClientFirst(username, nonce, bare);
    }

    /** A fresh server nonce part: random, printable, without commas. */
    public static String newNonce() {
        byte[] random = new byte[NONCE_BYTES];
        RANDOM.nextBytes(random);
        return Base64.getEncoder().withoutPadding().encodeToString(random);
    }

    /** Answers {@code first} for a user with {@code keys}: the exchange, holding server-first-message. */
    public static Exchange serverFirst(ClientFirst first, ScramKeys keys, String serverNonce) {
        return new Exchange(first, keys, first.clientNonce() + serverNonce);
    }

    /**
     * Keys for a user name that has no credential, so that the exchange looks the same as for one
     * that does and fails only at the proof: the salt is derived from the user name with
     * {@code secret} (the same user name gets the same salt), the keys are random.
     */
    public static ScramKeys unknownUser(ScramAlgorithm algorithm, String username, byte[] secret) {
        byte[] digest = ScramKeys.hmac(algorithm, secret, username.getBytes(StandardCharsets.UTF_8));
        byte[] salt = java.util.Arrays.copyOf(digest, ScramKeys.SALT_BYTES);
        byte[] stored = new byte[digest.length];
        byte[] server = new byte[digest.length];
        RANDOM.nextBytes(stored);
        RANDOM.nextBytes(server);
        return new ScramKeys(algorithm, salt, algorithm.defaultIterations(), stored, server);
    }

    /** One exchange after server-first-message: the client's final message decides it, once. */
    public static final class Exchange {

        private final ClientFirst first;
        private final ScramKeys keys;
        private final String nonce;
        private final String serverFirst;
        private boolean finished;

        private Exchange(ClientFirst first, ScramKeys keys, String nonce) {
            this.first = first;
            this.keys = keys;
            this.nonce = nonce;
            this.serverFirst = "r=" + nonce + ",s=" + Base64.getEncoder().encodeToString(keys.salt())
                    + ",i=" + keys.iterations();
        }

        public String username() {
            return first.username();
        }

        public ScramAlgorithm algorithm() {
            return keys.algorithm();
        }

        public byte[] serverFirst() {
            return serverFirst.getBytes(StandardCharsets.UTF_8);
        }

        /**
         * Checks client-final-message and, if its proof is right, returns server-final-message
         * ({@code v=ServerSignature}).
         *
         * @throws ScramException if the message is malformed, its nonce or channel binding is not
         *                        this exchange's, the proof is wrong, or the exchange was finished before
         */
        public byte[] finish(byte[] clientFinal) throws ScramException {
            if (finished) {
                throw new ScramException(Kind.MALFORMED, "the exchange is finished");
            }
            finished = true;
            String m = text(clientFinal, "client-final-message");
            int proofAt = m.lastIndexOf(",p=");
            if (proofAt < 0) {
                throw new ScramException(Kind.MALFORMED, "client-final-message needs p= last");
            }
            String withoutProof = m.substring(0, proofAt);
            String[] attributes = withoutProof.split(",", -1);
            if (attributes.length < 2) {
                throw new ScramException(Kind.MALFORMED, "client-final-message needs c=, r= and p=");
            }
            if (!CHANNEL_BINDING.equals(value(attributes[0], 'c'))) {
                throw new ScramException(Kind.MALFORMED, "channel binding must be c=biws");
            }
            if (!nonce.equals(value(attributes[1], 'r'))) {
                throw new ScramException(Kind.NONCE_MISMATCH, "nonce is not this exchange's");
            }
            byte[] proof = base64(m.substring(proofAt + 3), "proof");
            byte[] storedKey = keys.storedKey();
            if (proof.length != storedKey.length) {
                throw new ScramException(Kind.MALFORMED, "proof has " + proof.length + " bytes, not " + storedKey.length);
            }
            byte[] authMessage = (first.bare() + "," + serverFirst + "," + withoutProof).getBytes(StandardCharsets.UTF_8);
            byte[] clientKey = ScramKeys.hmac(keys.algorithm(), storedKey, authMessage); // ClientSignature
            for (int i = 0; i < clientKey.length; i++) {
                clientKey[i] ^= proof[i];
            }
            // Constant time: how much of a guessed proof was right must not show in the timing.
            if (!MessageDigest.isEqual(ScramKeys.hash(keys.algorithm(), clientKey), storedKey)) {
                throw new ScramException(Kind.INVALID_PROOF, "wrong proof");
            }
            byte[] serverSignature = ScramKeys.hmac(keys.algorithm(), keys.serverKey(), authMessage);
            return ("v=" + Base64.getEncoder().encodeToString(serverSignature)).getBytes(StandardCharsets.UTF_8);
        }
    }

    private static String text(byte[] message, String what) throws ScramException {
        if (message == null || message.length == 0) {
            throw new ScramException(Kind.MALFORMED, what + " is missing");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(message)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new ScramException(Kind.MALFORMED, what + " is not UTF-8");
        }
    }

    private static String value(String attribute, char name) throws ScramException {
        if (attribute.length() < 2 || attribute.charAt(0) != name || attribute.charAt(1) != '=') {
            throw new ScramException(Kind.MALFORMED, "expected attribute " + name + "=");
        }
        return attribute.substring(2);
    }

    /** saslname (RFC 5802 5.1): ',' and '=' are sent as '=2C' and '=3D'; any other '=' is malformed. */
    static String unescapeUsername(String saslname) throws ScramException {
        if (saslname.isEmpty()) {
            throw new ScramException(Kind.MALFORMED, "user name is empty");
        }
        StringBuilder out = new StringBuilder(saslname.length());
        for (int i = 0; i < saslname.length(); i++) {
            char c = saslname.charAt(i);
            if (c != '=') {
                out.append(c);
            } else if (saslname.startsWith("=2C", i)) {
                out.append(',');
                i += 2;
            } else if (saslname.startsWith("=3D", i)) {
                out.append('=');
                i += 2;
            } else {
                throw new ScramException(Kind.MALFORMED, "user name has '=' not followed by 2C or 3D");
            }
        }
        return out.toString();
    }

    /** The inverse of {@link #unescapeUsername}, for clients. */
    public static String escapeUsername(String username) {
        return username.replace("=", "=3D").replace(",", "=2C");
    }

    private static void checkNonce(String nonce) throws ScramException {
        if (nonce.isEmpty()) {
            throw new ScramException(Kind.MALFORMED, "nonce is empty");
        }
        for (int i = 0; i < nonce.length(); i++) {
            char c = nonce.charAt(i);
            if (c < 0x21 || c > 0x7E || c == ',') {
                throw new ScramException(Kind.MALFORMED, "nonce has a character that is not printable ASCII");
            }
        }
    }

    private static byte[] base64(String value, String what) throws ScramException {
        try {
            return Base64.getDecoder().decode(value);
        } catch (IllegalArgumentException e) {
            throw new ScramException(Kind.MALFORMED, what + " is not base64");
        }
    }
}
