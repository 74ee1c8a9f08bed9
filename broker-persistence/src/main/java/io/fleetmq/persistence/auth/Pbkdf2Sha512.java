package io.fleetmq.persistence.auth;

import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * PBKDF2 with HMAC-SHA512 (RFC 8018, section 5.2), the key derivation of Mosquitto's {@code $7$}
 * hashes, computed on SHA-512's compression function (FIPS 180-4) directly.
 *
 * <p>A {@code $7$} check is a hundred iterations of two HMACs, and every one of those HMACs hashes a
 * 64-byte value after the key's 128-byte pad. So the state after each pad is computed once per
 * check, and each iteration is exactly two compressions of one block whose padding and length are
 * always the same, kept as eight words end to end: no byte conversion, no copy of a digest object,
 * no allocation inside the loop. That is where a general HMAC spends a third of a check (it hashes
 * its pad again for every HMAC and copies bytes in and out of its digest), and a reconnect storm of
 * devices with {@code $7$} credentials spends a sixth of a node's CPU in these checks.
 *
 * <p>Stateless and thread-safe. The tests hold it against BouncyCastle's and the JDK's PBKDF2.
 */
final class Pbkdf2Sha512 {

    /** SHA-512's block, and the HMAC key's pad: 128 bytes. */
    private static final int BLOCK_BYTES = 128;
    /** SHA-512's digest: 64 bytes, eight words. */
    private static final int DIGEST_BYTES = 64;
    /** Length in bits of every message an iteration hashes: the pad's block, then a 64-byte value. */
    private static final long PADDED_VALUE_BITS = (BLOCK_BYTES + DIGEST_BYTES) * 8L;

    /**
     * Round constants: the first 64 bits of the fractional parts of the cube roots of the first 80
     * primes. Derived here from that definition rather than typed in.
     */
    private static final long[] K = new long[80];
    /** Initial hash value: the first 64 bits of the fractional parts of the square roots of the first 8 primes. */
    private static final long[] IV = new long[8];

    static {
        int n = 0;
        for (int p = 2; n < K.length; p++) {
            BigInteger prime = BigInteger.valueOf(p);
            if (!prime.isProbablePrime(64)) {
                continue;
            }
            // an integer root of p * 2^(64k) has the root's fractional bits in its low 64 bits
            K[n] = integerCubeRoot(prime.shiftLeft(192)).longValue();
            if (n < IV.length) {
                IV[n] = prime.shiftLeft(128).sqrt().longValue();
            }
            n++;
        }
    }

    private Pbkdf2Sha512() {
    }

    /**
     * The derived key.
     *
     * @param password   the password's bytes; longer than 128 bytes it is hashed first, as HMAC does
     * @param salt       the salt
     * @param iterations at least 1
     * @param length     bytes of key wanted, at least 1
     */
    static byte[] derive(byte[] password, byte[] salt, int iterations, int length) {
        if (iterations < 1 || length < 1) {
            throw new IllegalArgumentException("iterations and length must be positive");
        }
        long[] w = new long[80];
        long[] inner = keyedState(password, (byte) 0x36, w);
        long[] outer = keyedState(password, (byte) 0x5c, w);
        byte[] key = new byte[length];
        long[] u = new long[8];
        long[] x = new long[8];
        long[] t = new long[8];
        for (int block = 1, done = 0; done < length; block++) {
            // U1 = HMAC(password, salt || block number), the only message of its own length
            byte[] first = Arrays.copyOf(salt, salt.length + 4);
            for (int i = 0; i < 4; i++) {
                first[salt.length + i] = (byte) (block >>> (24 - 8 * i));
            }
            hashTail(inner, first, w, x);
            compressValue(outer, x, w, u);
            System.arraycopy(u, 0, t, 0, 8);
            for (int j = 1; j < iterations; j++) {
                compressValue(inner, u, w, x);
                compressValue(outer, x, w, u);
                for (int i = 0; i < 8; i++) {
                    t[i] ^= u[i];
                }
            }
            for (int i = 0; i < DIGEST_BYTES && done < length; i++, done++) {
                key[done] = (byte) (t[i >>> 3] >>> (56 - 8 * (i & 7)));
            }
        }
        return key;
    }

    /** The state after compressing the HMAC key, padded to a block and XORed with {@code pad}. */
    private static long[] keyedState(byte[] password, byte pad, long[] w) {
        byte[] key = password.length > BLOCK_BYTES ? sha512(password) : password;
        byte[] block = new byte[BLOCK_BYTES];
        for (int i = 0; i < BLOCK_BYTES; i++) {
            block[i] = (byte) ((i < key.length ? key[i] : 0) ^ pad);
        }
        readWords(block, 0, w);
        long[] state = new long[8];
        compress(IV, w, state);
        return state;
    }

    /** {@code out}: the hash of {@code message} following one block already compressed into {@code state}. */
    private static void hashTail(long[] state, byte[] message, long[] w, long[] out) {
        long bits = (BLOCK_BYTES + (long) message.length) * 8;
        // the message, 0x80, zeros, and the length in the last 16 bytes of the last block
        int padded = (message.length + 1 + 16 + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
        byte[] buffer = Arrays.copyOf(message, padded);
        buffer[message.length] = (byte) 0x80;
        for (int i = 0; i < 8; i++) {
            buffer[padded - 1 - i] = (byte) (bits >>> (8 * i));
        }
        System.arraycopy(state, 0, out, 0, 8);
        for (int offset = 0; offset < padded; offset += BLOCK_BYTES) {
            readWords(buffer, offset, w);
            compress(out, w, out);
        }
    }

    /** {@code out}: the hash of a 64-byte value (eight words) following one block already in {@code state}. */
    private static void compressValue(long[] state, long[] value, long[] w, long[] out) {
        System.arraycopy(value, 0, w, 0, 8);
        w[8] = 0x8000_0000_0000_0000L;
        w[9] = 0;
        w[10] = 0;
        w[11] = 0;
        w[12] = 0;
        w[13] = 0;
        w[14] = 0;
        w[15] = PADDED_VALUE_BITS;
        compress(state, w, out);
    }

    /**
     * SHA-512's compression of the block in {@code w[0..15]} (big-endian words) into {@code state},
     * written to {@code out}, which may be {@code state}. Uses all of {@code w} for the message schedule.
     */
    private static void compress(long[] state, long[] w, long[] out) {
        for (int i = 16; i < 80; i++) {
            long a = w[i - 15];
            long b = w[i - 2];
            long s0 = Long.rotateRight(a, 1) ^ Long.rotateRight(a, 8) ^ (a >>> 7);
            long s1 = Long.rotateRight(b, 19) ^ Long.rotateRight(b, 61) ^ (b >>> 6);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        long a = state[0];
        long b = state[1];
        long c = state[2];
        long d = state[3];
        long e = state[4];
        long f = state[5];
        long g = state[6];
        long h = state[7];
        for (int i = 0; i < 80; i++) {
            long t1 = h + (Long.rotateRight(e, 14) ^ Long.rotateRight(e, 18) ^ Long.rotateRight(e, 41))
                    + ((e & f) ^ (~e & g)) + K[i] + w[i];
            long t2 = (Long.rotateRight(a, 28) ^ Long.rotateRight(a, 34) ^ Long.rotateRight(a, 39))
                    + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        out[0] = state[0] + a;
        out[1] = state[1] + b;
        out[2] = state[2] + c;
        out[3] = state[3] + d;
        out[4] = state[4] + e;
        out[5] = state[5] + f;
        out[6] = state[6] + g;
        out[7] = state[7] + h;
    }

    private static void readWords(byte[] bytes, int offset, long[] w) {
        for (int i = 0; i < 16; i++) {
            long word = 0;
            for (int j = 0; j < 8; j++) {
                word = (word << 8) | (bytes[offset + 8 * i + j] & 0xff);
            }
            w[i] = word;
        }
    }

    private static byte[] sha512(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-512").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-512", e);
        }
    }

    /** The largest r with r^3 <= x, for positive x. */
    private static BigInteger integerCubeRoot(BigInteger x) {
        BigInteger three = BigInteger.valueOf(3);
        BigInteger r = BigInteger.ONE.shiftLeft(x.bitLength() / 3 + 1); // above the root
        while (true) { // Newton's step from above decreases until it reaches the root
            BigInteger next = r.shiftLeft(1).add(x.divide(r.multiply(r))).divide(three);
            if (next.compareTo(r) >= 0) {
                return r;
            }
            r = next;
        }
    }
}
