package io.fleetmq.persistence.auth;

import java.security.MessageDigest;
import java.util.Base64;
import org.bouncycastle.crypto.digests.SHA512Digest;

/**
 * Checks the two hash formats that Mosquitto's {@code mosquitto_passwd} writes, so that password
 * files imported from Mosquitto keep working. Both keep the salt and the hash in standard Base64
 * with padding, and both hash the password's bytes as given (UTF-8 for text):
 * <ul>
 *   <li>{@code $7$<iterations>$<salt>$<hash>}: PBKDF2-HMAC-SHA512 of the password with the salt,
 *       64 bytes (Mosquitto 2.x, 101 iterations and a 12-byte salt by default);</li>
 *   <li>{@code $6$<salt>$<hash>}: one SHA-512 of the password followed by the salt (Mosquitto 1.x).
 *       This is Mosquitto's own format, not glibc's sha512-crypt, which shares the prefix.</li>
 * </ul>
 * Stateless and thread-safe.
 */
final class MosquittoHashes {

    static final String PBKDF2_PREFIX = "$7$";
    static final String SHA512_PREFIX = "$6$";

    private static final int SHA512_BYTES = 64;
    /** Far more than the 12 bytes Mosquitto writes; a longer salt is a damaged value, not a hash. */
    private static final int MAX_SALT_BYTES = 256;
    private static final String PBKDF2 = "Mosquitto $7$ (PBKDF2-SHA512)";
    private static final String SHA512 = "Mosquitto $6$ (SHA-512)";

    private MosquittoHashes() {
    }

    static PasswordCheck checkPbkdf2(byte[] password, String stored, int maxIterations) {
        String[] parts = stored.split("\\$", -1);
        // "", "7", iterations, salt, hash
        if (parts.length != 5) {
            return PasswordCheck.malformed("$7$ needs $7$<iterations>$<salt>$<hash>");
        }
        int iterations = parseIterations(parts[2]);
        if (iterations < 1) {
            return PasswordCheck.malformed("$7$ iteration count is not a positive number");
        }
        if (iterations > maxIterations) {
            return PasswordCheck.tooCostly("$7$ iteration count " + iterations + " is above the limit of " + maxIterations);
        }
        byte[] salt = decode(parts[3]);
        byte[] expected = decode(parts[4]);
        if (salt == null || salt.length == 0 || salt.length > MAX_SALT_BYTES) {
            return PasswordCheck.malformed("$7$ salt is not Base64 of 1 to " + MAX_SALT_BYTES + " bytes");
        }
        if (expected == null || expected.length != SHA512_BYTES) {
            return PasswordCheck.malformed("$7$ hash is not Base64 of " + SHA512_BYTES + " bytes");
        }
        byte[] actual = Pbkdf2Sha512.derive(password, salt, iterations, SHA512_BYTES);
        return MessageDigest.isEqual(actual, expected) ? PasswordCheck.match(PBKDF2) : PasswordCheck.mismatch(PBKDF2);
    }

    static PasswordCheck checkSha512(byte[] password, String stored) {
        String[] parts = stored.split("\\$", -1);
        // "", "6", salt, hash; glibc's sha512-crypt has a salt of crypt characters and an 86-character
        // hash without padding, so it fails the Base64 and length checks below and is reported malformed.
        if (parts.length != 4) {
            return PasswordCheck.malformed("$6$ needs $6$<salt>$<hash>");
        }
        byte[] salt = decode(parts[2]);
        byte[] expected = decode(parts[3]);
        if (salt == null || salt.length == 0 || salt.length > MAX_SALT_BYTES) {
            return PasswordCheck.malformed("$6$ salt is not Base64 of 1 to " + MAX_SALT_BYTES + " bytes");
        }
        if (expected == null || expected.length != SHA512_BYTES) {
            return PasswordCheck.malformed("$6$ hash is not Base64 of " + SHA512_BYTES
                    + " bytes (glibc sha512-crypt hashes are not Mosquitto hashes)");
        }
        SHA512Digest digest = new SHA512Digest();
        digest.update(password, 0, password.length);
        digest.update(salt, 0, salt.length);
        byte[] actual = new byte[SHA512_BYTES];
        digest.doFinal(actual, 0);
        return MessageDigest.isEqual(actual, expected) ? PasswordCheck.match(SHA512) : PasswordCheck.mismatch(SHA512);
    }

    /** The iteration count, or -1 if it is not a plain decimal number that fits an int. */
    private static int parseIterations(String text) {
        if (text.isEmpty()) {
            return -1;
        }
        long value = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            // saturate: any count past an int is far over every limit anyway
            value = Math.min(value * 10 + (c - '0'), Integer.MAX_VALUE);
        }
        return (int) value;
    }

    private static byte[] decode(String base64) {
        try {
            return Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
