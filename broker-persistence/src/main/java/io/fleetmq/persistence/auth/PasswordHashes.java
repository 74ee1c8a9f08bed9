package io.fleetmq.persistence.auth;

import java.security.SecureRandom;
import java.util.Arrays;
import org.bouncycastle.crypto.generators.OpenBSDBCrypt;
import org.bouncycastle.util.Strings;

/**
 * Creates and checks the stored password hashes of MQTT client credentials and admin users.
 *
 * <p>New hashes are bcrypt ({@code $2b$}). Checking also accepts {@code $2a$} and {@code $2y$}
 * bcrypt, and Mosquitto's {@code $7$} (PBKDF2-SHA512) and {@code $6$} (SHA-512) hashes, so that
 * credentials imported from Mosquitto keep working without a password reset (see
 * docs/security.md).
 *
 * <p>A check never throws: whatever the stored value holds, the answer is a {@link PasswordCheck}
 * whose outcome is a match or one of the reasons for refusing. Every comparison of hashes takes
 * the same time wherever they differ. The work one check may do is bounded by the largest bcrypt
 * cost and PBKDF2 iteration count this instance accepts, so one stored value cannot make a
 * CONNECT spin for minutes. Plain passwords are only held for the duration of a call; the
 * encoded copies made here are wiped before returning.
 *
 * <p>Immutable and thread-safe; one instance serves the whole node.
 */
public final class PasswordHashes {

    /**
     * Cost of new bcrypt hashes unless configured: 2^10 rounds, about 0.1 s of one server core.
     * Unlike a web login, an MQTT client checks its password on every CONNECT, and a fleet
     * reconnects all at once after a network or node outage, so the cost is paid in bursts; 10 is
     * the usual default of bcrypt libraries and the lower bound that password-storage guidance
     * recommends. Operators who want more can raise it (each step doubles the work).
     */
    public static final int DEFAULT_BCRYPT_COST = 10;
    /** bcrypt's own lower bound. */
    public static final int MIN_BCRYPT_COST = 4;
    /**
     * Highest bcrypt cost checked by default: 2^14 rounds, 16 times the default, over a second of
     * one core. A stored hash with a higher cost (the format allows 31, days of work) is refused.
     */
    public static final int DEFAULT_MAX_BCRYPT_COST = 14;
    /**
     * Highest PBKDF2 iteration count of a {@code $7$} hash checked by default. Mosquitto writes 101
     * unless told otherwise; 100,000 iterations of HMAC-SHA512 take under 0.2 s of one core, between
     * a bcrypt check at cost 10 and one at cost 11. A stored hash with more is refused.
     */
    public static final int DEFAULT_MAX_PBKDF2_ITERATIONS = 100_000;
    /** bcrypt reads at most this many bytes of a password and ignores the rest. */
    public static final int BCRYPT_MAX_PASSWORD_BYTES = 72;

    private static final String BCRYPT_VERSION = "2b";
    private static final String BCRYPT = "bcrypt";
    private static final int BCRYPT_LENGTH = 60;

    private final int bcryptCost;
    private final int maxBcryptCost;
    private final int maxPbkdf2Iterations;
    private final SecureRandom random = new SecureRandom();

    /** New hashes at {@link #DEFAULT_BCRYPT_COST}, default limits for checking. */
    public PasswordHashes() {
        this(DEFAULT_BCRYPT_COST, DEFAULT_MAX_BCRYPT_COST, DEFAULT_MAX_PBKDF2_ITERATIONS);
    }

    /**
     * @param bcryptCost          cost of new hashes, from 4 to {@code maxBcryptCost}
     * @param maxBcryptCost       highest cost of a stored bcrypt hash that is checked, at most 31
     * @param maxPbkdf2Iterations highest iteration count of a stored {@code $7$} hash that is checked
     * @throws IllegalArgumentException naming the value that is out of range
     */
    public PasswordHashes(int bcryptCost, int maxBcryptCost, int maxPbkdf2Iterations) {
        if (maxBcryptCost < MIN_BCRYPT_COST || maxBcryptCost > 31) {
            throw new IllegalArgumentException("maximum bcrypt cost must be between 4 and 31, was " + maxBcryptCost);
        }
        if (bcryptCost < MIN_BCRYPT_COST || bcryptCost > maxBcryptCost) {
            throw new IllegalArgumentException(
                    "bcrypt cost must be between 4 and " + maxBcryptCost + ", was " + bcryptCost);
        }
        if (maxPbkdf2Iterations < 1) {
            throw new IllegalArgumentException("maximum PBKDF2 iterations must be at least 1, was " + maxPbkdf2Iterations);
        }
        this.bcryptCost = bcryptCost;
        this.maxBcryptCost = maxBcryptCost;
        this.maxPbkdf2Iterations = maxPbkdf2Iterations;
    }

    public int bcryptCost() {
        return bcryptCost;
    }

    /**
     * A new bcrypt hash of the password, with a fresh random salt.
     *
     * @throws IllegalArgumentException if the password is longer than 72 bytes in UTF-8: bcrypt
     *                                  would silently ignore the rest, so such a password is refused
     *                                  when it is set rather than weakened without notice
     */
    public String hash(char[] password) {
        if (password == null) {
            throw new IllegalArgumentException("password is required");
        }
        byte[] bytes = Strings.toUTF8ByteArray(password);
        try {
            return hash(bytes);
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /** As {@link #hash(char[])}, for a password given as bytes (MQTT passwords are binary data). */
    public String hash(byte[] password) {
        if (password == null) {
            throw new IllegalArgumentException("password is required");
        }
        if (password.length > BCRYPT_MAX_PASSWORD_BYTES) {
            throw new IllegalArgumentException("password must be at most " + BCRYPT_MAX_PASSWORD_BYTES
                    + " bytes in UTF-8, was " + password.length);
        }
        byte[] salt = new byte[16];
        random.nextBytes(salt);
        return OpenBSDBCrypt.generate(BCRYPT_VERSION, password, salt, bcryptCost);
    }

    /** Whether the password matches the stored hash; {@link #check(char[], String)} says why not. */
    public boolean verify(char[] password, String stored) {
        return check(password, stored).matched();
    }

    /** Whether the password matches the stored hash; {@link #check(byte[], String)} says why not. */
    public boolean verify(byte[] password, String stored) {
        return check(password, stored).matched();
    }

    /** Checks a text password, encoded as UTF-8 as MQTT clients and mosquitto_passwd send it. */
    public PasswordCheck check(char[] password, String stored) {
        if (password == null) {
            return new PasswordCheck(PasswordCheck.Outcome.NO_PASSWORD, "no password given");
        }
        byte[] bytes = Strings.toUTF8ByteArray(password);
        try {
            return check(bytes, stored);
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /** Checks a password given as bytes, as an MQTT CONNECT carries it. Never throws. */
    public PasswordCheck check(byte[] password, String stored) {
        if (password == null) {
            return new PasswordCheck(PasswordCheck.Outcome.NO_PASSWORD, "no password given");
        }
        if (stored == null || stored.isEmpty()) {
            return PasswordCheck.malformed("no hash stored");
        }
        try {
            if (stored.startsWith("$2a$") || stored.startsWith("$2b$") || stored.startsWith("$2y$")) {
                return checkBcrypt(password, stored);
            }
            if (stored.startsWith(MosquittoHashes.PBKDF2_PREFIX)) {
                return MosquittoHashes.checkPbkdf2(password, stored, maxPbkdf2Iterations);
            }
            if (stored.startsWith(MosquittoHashes.SHA512_PREFIX)) {
                return MosquittoHashes.checkSha512(password, stored);
            }
            return PasswordCheck.malformed("unknown format (accepted: $2a$, $2b$, $2y$, $7$, $6$)");
        } catch (RuntimeException e) {
            // A damaged value that slipped past the format checks must refuse one client, not crash
            // its CONNECT. The exception's message may quote the stored value, so it is not passed on.
            return PasswordCheck.malformed("could not be read (" + e.getClass().getSimpleName() + ")");
        }
    }

    /**
     * Whether a stored hash should be replaced the next time its password is known: it is not
     * bcrypt, or not at the configured cost.
     */
    public boolean needsRehash(String stored) {
        return bcryptCostOf(stored) != bcryptCost;
    }

    private PasswordCheck checkBcrypt(byte[] password, String stored) {
        int cost = bcryptCostOf(stored);
        if (cost < 0 || stored.length() != BCRYPT_LENGTH) {
            return PasswordCheck.malformed("bcrypt needs $2b$<two-digit cost>$ and 53 characters of salt and hash");
        }
        if (cost < MIN_BCRYPT_COST) {
            return PasswordCheck.malformed("bcrypt cost " + cost + " is below 4");
        }
        if (cost > maxBcryptCost) {
            return PasswordCheck.tooCostly("bcrypt cost " + cost + " is above the limit of " + maxBcryptCost);
        }
        return OpenBSDBCrypt.checkPassword(stored, password) ? PasswordCheck.match(BCRYPT) : PasswordCheck.mismatch(BCRYPT);
    }

    /** The cost of a stored bcrypt hash, or -1 if it is not one. */
    private static int bcryptCostOf(String stored) {
        if (stored == null || stored.length() < 7 || !stored.startsWith("$2") || stored.charAt(6) != '$') {
            return -1;
        }
        char version = stored.charAt(2);
        char tens = stored.charAt(4);
        char ones = stored.charAt(5);
        if ((version != 'a' && version != 'b' && version != 'y') || stored.charAt(3) != '$'
                || tens < '0' || tens > '9' || ones < '0' || ones > '9') {
            return -1;
        }
        return (tens - '0') * 10 + (ones - '0');
    }
}
