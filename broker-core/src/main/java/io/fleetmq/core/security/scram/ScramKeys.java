package io.fleetmq.core.security.scram;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.text.Normalizer;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What the broker keeps of a SCRAM password (RFC 5802 3): salt, iteration count, StoredKey and
 * ServerKey. They let the server check a client's proof and prove itself in return, but give
 * neither the password nor what a client needs to log in (ClientKey).
 */
public record ScramKeys(ScramAlgorithm algorithm, byte[] salt, int iterations, byte[] storedKey, byte[] serverKey) {

    /** Salt length for new credentials, in bytes. */
    public static final int SALT_BYTES = 16;

    private static final SecureRandom RANDOM = new SecureRandom();

    public ScramKeys {
        if (algorithm == null || salt == null || storedKey == null || serverKey == null) {
            throw new IllegalArgumentException("SCRAM keys need an algorithm, a salt, a StoredKey and a ServerKey");
        }
        if (iterations < 1) {
            throw new IllegalArgumentException("SCRAM iteration count must be at least 1, was " + iterations);
        }
        salt = salt.clone();
        storedKey = storedKey.clone();
        serverKey = serverKey.clone();
    }

    /** A new credential: a random salt and the algorithm's default iteration count. */
    public static ScramKeys derive(ScramAlgorithm algorithm, char[] password) {
        byte[] salt = new byte[SALT_BYTES];
        RANDOM.nextBytes(salt);
        return derive(algorithm, password, salt, algorithm.defaultIterations());
    }

    /** The stored form of {@code password} (RFC 5802 3); the password bytes are wiped afterwards. */
    public static ScramKeys derive(ScramAlgorithm algorithm, char[] password, byte[] salt, int iterations) {
        if (password == null || password.length == 0) {
            throw new IllegalArgumentException("password must not be empty");
        }
        byte[] saltedPassword = hi(algorithm, normalize(password), salt, iterations);
        try {
            byte[] clientKey = hmac(algorithm, saltedPassword, "Client Key".getBytes(StandardCharsets.US_ASCII));
            byte[] storedKey = hash(algorithm, clientKey);
            byte[] serverKey = hmac(algorithm, saltedPassword, "Server Key".getBytes(StandardCharsets.US_ASCII));
            Arrays.fill(clientKey, (byte) 0);
            return new ScramKeys(algorithm, salt, iterations, storedKey, serverKey);
        } finally {
            Arrays.fill(saltedPassword, (byte) 0);
        }
    }

    /**
     * The password as SCRAM hashes it: RFC 5802 asks for SASLprep (RFC 4013). This applies its
     * mapping (non-ASCII spaces become a space, characters "commonly mapped to nothing" go) and
     * NFKC normalization; ASCII passwords are unchanged. Its prohibition and bidi checks are left
     * out: such passwords are still hashed the same way on both sides by clients that normalize.
     */
    static byte[] normalize(char[] password) {
        StringBuilder mapped = new StringBuilder(password.length);
        for (char c : password) {
            if (c == '\u00AD' || c == '\u034F' || c == '\u1806' || c >= '\u180B' && c <= '\u180D'
                    || c >= '\u200B' && c <= '\u200D' || c == '\u2060' || c >= '\uFE00' && c <= '\uFE0F'
                    || c == '\uFEFF') {
                continue; // RFC 3454 B.1
            }
            mapped.append(c != ' ' && Character.getType(c) == Character.SPACE_SEPARATOR ? ' ' : c); // RFC 3454 C.1.2
        }
        String normalized = Normalizer.normalize(mapped, Normalizer.Form.NFKC);
        mapped.setLength(0);
        return normalized.getBytes(StandardCharsets.UTF_8);
    }

    /** Hi() of RFC 5802 2.2: PBKDF2 with the algorithm's HMAC and one block of output. */
    static byte[] hi(ScramAlgorithm algorithm, byte[] password, byte[] salt, int iterations) {
        try {
            Mac mac = Mac.getInstance(algorithm.hmac());
            mac.init(new SecretKeySpec(password, algorithm.hmac()));
            Arrays.fill(password, (byte) 0);
            mac.update(salt);
            byte[] u = mac.doFinal(new byte[] {0, 0, 0, 1});
            byte[] result = u.clone();
            for (int i = 1; i < iterations; i++) {
                u = mac.doFinal(u);
                for (int j = 0; j < result.length; j++) {
                    result[j] ^= u[j];
                }
            }
            return result;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(algorithm.hmac() + " is not available", e);
        }
    }

    static byte[] hmac(ScramAlgorithm algorithm, byte[] key, byte[] data) {
        try {
            Mac mac = Mac.getInstance(algorithm.hmac());
            mac.init(new SecretKeySpec(key, algorithm.hmac()));
            return mac.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(algorithm.hmac() + " is not available", e);
        }
    }

    static byte[] hash(ScramAlgorithm algorithm, byte[] data) {
        try {
            return MessageDigest.getInstance(algorithm.digest()).digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(algorithm.digest() + " is not available", e);
        }
    }

    @Override
    public byte[] salt() {
        return salt.clone();
    }

    @Override
    public byte[] storedKey() {
        return storedKey.clone();
    }

    @Override
    public byte[] serverKey() {
        return serverKey.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScramKeys k && algorithm == k.algorithm && iterations == k.iterations
                && Arrays.equals(salt, k.salt) && MessageDigest.isEqual(storedKey, k.storedKey)
                && MessageDigest.isEqual(serverKey, k.serverKey);
    }

    @Override
    public int hashCode() {
        return 31 * algorithm.hashCode() + Arrays.hashCode(salt);
    }

    /** Never shows the keys. */
    @Override
    public String toString() {
        return "ScramKeys[" + algorithm.apiName() + ", iterations=" + iterations + "]";
    }
}
