package io.fleetmq.persistence.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.persistence.auth.PasswordCheck.Outcome;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PasswordHashesTest {

    /*
     * Made with mosquitto_passwd of Mosquitto 2.0.11 (Debian 12 package), in batch mode:
     *   mosquitto_passwd -c -b pw7 device-7 'correct horse 7'                 (default: sha512-pbkdf2, 101 iterations)
     *   mosquitto_passwd -c -I 1000 -b pw7i app 'pässwörd-€'                  (UTF-8 terminal)
     *   mosquitto_passwd -c -H sha512 -b pw6 device-6 'Tr0ub4dor&3'           (the Mosquitto 1.x format)
     */
    private static final String MOSQUITTO_7 =
            "$7$101$Z0N4gvcrKFLO0BeX$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==";
    private static final String MOSQUITTO_7_PASSWORD = "correct horse 7";
    private static final String MOSQUITTO_7_1000 =
            "$7$1000$vXLF10VQs6MGHq4Z$ZKAYHK+FVHraL/TQOVHi+JU5KN5N9p2Z+PwR41Nv//9eWo0oNzB2illr2kMPRWfnaY7EaFwFmQpxb3Eoex5RJQ==";
    private static final String MOSQUITTO_7_1000_PASSWORD = "pässwörd-€";
    private static final String MOSQUITTO_6 =
            "$6$pxYw4HjecnGl4afL$7ozSpGEfd6pS6/g8KmTHl8GdrWIHBohUa62y+b3kZONMlsAXEw/nngat5fnA6xAMnH41meelZ05m2VKjZ0umQQ==";
    private static final String MOSQUITTO_6_PASSWORD = "Tr0ub4dor&3";

    /* bcrypt vectors of the crypt_blowfish test set; the last one made with libxcrypt's crypt(3). */
    private static final String BCRYPT_2A = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    private static final String BCRYPT_2Y = "$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    private static final String BCRYPT_2B = "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    private static final String BCRYPT_PASSWORD = "U*U";
    private static final String BCRYPT_UTF8 = "$2b$04$abcdefghijklmnopqrstuuyx2n0Zzopyr9QuYTMCfOJJOj526QVoC";
    private static final String BCRYPT_UTF8_PASSWORD = "pässwörd";

    /* glibc's sha512-crypt of "secret": same $6$ prefix, a different format that Mosquitto never wrote. */
    private static final String GLIBC_SHA512_CRYPT =
            "$6$saltsaltsalt1234$dtxmlxeVqETZAXDiGjM3F08.IhI21yWjIUwkj8N4k68tFPNzB8dV9Hdgi6NuUGjrhzLc9V.BoyEEcHx3QIz5d0";

    /** Cheapest bcrypt cost, so round trips stay fast. */
    private final PasswordHashes hashes = new PasswordHashes(4, PasswordHashes.DEFAULT_MAX_BCRYPT_COST,
            PasswordHashes.DEFAULT_MAX_PBKDF2_ITERATIONS);

    @Test
    void bcryptRoundTrip() {
        String stored = hashes.hash("s3cret-Ü".toCharArray());

        assertTrue(stored.startsWith("$2b$04$"), stored);
        assertEquals(60, stored.length());
        assertTrue(hashes.verify("s3cret-Ü".toCharArray(), stored));
        assertTrue(hashes.verify("s3cret-Ü".getBytes(StandardCharsets.UTF_8), stored));
        assertFalse(hashes.verify("s3cret-U".toCharArray(), stored));
        assertFalse(hashes.verify("".toCharArray(), stored));
        assertNotEquals(stored, hashes.hash("s3cret-Ü".toCharArray()), "every hash has its own salt");
    }

    @Test
    void newHashesUseTheConfiguredCostAndDefaultToTen() {
        PasswordHashes defaults = new PasswordHashes();
        assertEquals(10, defaults.bcryptCost());

        String stored = defaults.hash("pw".toCharArray());

        assertTrue(stored.startsWith("$2b$10$"), stored);
        assertTrue(defaults.verify("pw".toCharArray(), stored));
        assertFalse(defaults.needsRehash(stored));
        assertTrue(defaults.needsRehash(hashes.hash("pw".toCharArray())), "cost 4 is not the configured 10");
        assertTrue(defaults.needsRehash(MOSQUITTO_7));
        assertTrue(defaults.needsRehash(MOSQUITTO_6));
    }

    @Test
    void emptyPasswordRoundTrips() {
        String stored = hashes.hash(new char[0]);
        assertTrue(hashes.verify(new char[0], stored));
        assertFalse(hashes.verify("x".toCharArray(), stored));
    }

    @Test
    void aPasswordBcryptWouldTruncateIsRefusedWhenSet() {
        char[] seventyThree = "a".repeat(73).toCharArray();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> hashes.hash(seventyThree));
        assertFalse(e.getMessage().contains("aaaa"), "the message must not quote the password");

        // 72 bytes is fine; 24 three-byte characters are 72 bytes too, 25 are not
        assertTrue(hashes.verify("a".repeat(72).toCharArray(), hashes.hash("a".repeat(72).toCharArray())));
        hashes.hash("€".repeat(24).toCharArray());
        assertThrows(IllegalArgumentException.class, () -> hashes.hash("€".repeat(25).toCharArray()));
    }

    @Test
    void bcryptKnownVectorsOfEveryVersion() {
        for (String stored : new String[] {BCRYPT_2A, BCRYPT_2Y, BCRYPT_2B}) {
            PasswordCheck check = hashes.check(BCRYPT_PASSWORD.toCharArray(), stored);
            assertEquals(Outcome.MATCH, check.outcome(), stored + ": " + check.reason());
            assertEquals(Outcome.MISMATCH, hashes.check("U*U*".toCharArray(), stored).outcome(), stored);
        }
        assertTrue(hashes.verify(BCRYPT_UTF8_PASSWORD.toCharArray(), BCRYPT_UTF8));
        assertFalse(hashes.verify("passwörd".toCharArray(), BCRYPT_UTF8));
    }

    @Test
    void mosquittoPbkdf2HashesFromMosquittoPasswd() {
        assertEquals(Outcome.MATCH, hashes.check(MOSQUITTO_7_PASSWORD.toCharArray(), MOSQUITTO_7).outcome());
        assertEquals(Outcome.MATCH, hashes.check(MOSQUITTO_7_1000_PASSWORD.toCharArray(), MOSQUITTO_7_1000).outcome());
        assertTrue(hashes.verify(MOSQUITTO_7_1000_PASSWORD.getBytes(StandardCharsets.UTF_8), MOSQUITTO_7_1000));

        PasswordCheck wrong = hashes.check("correct horse 8".toCharArray(), MOSQUITTO_7);
        assertEquals(Outcome.MISMATCH, wrong.outcome());
        assertTrue(wrong.reason().contains("$7$"), wrong.reason());
        assertFalse(hashes.verify("pässwörd-e".toCharArray(), MOSQUITTO_7_1000));
        // the same password against the other hash: the salt and count matter
        assertFalse(hashes.verify(MOSQUITTO_7_PASSWORD.toCharArray(), MOSQUITTO_7_1000));
    }

    @Test
    void mosquittoSha512HashFromMosquittoPasswd() {
        assertEquals(Outcome.MATCH, hashes.check(MOSQUITTO_6_PASSWORD.toCharArray(), MOSQUITTO_6).outcome());
        assertEquals(Outcome.MISMATCH, hashes.check("Tr0ub4dor&4".toCharArray(), MOSQUITTO_6).outcome());
        assertEquals(Outcome.MISMATCH, hashes.check(new char[0], MOSQUITTO_6).outcome());
    }

    @Test
    void glibcSha512CryptIsNotTakenForMosquittosFormat() {
        PasswordCheck check = hashes.check("secret".toCharArray(), GLIBC_SHA512_CRYPT);
        assertEquals(Outcome.MALFORMED, check.outcome());
        assertTrue(check.reason().contains("glibc"), check.reason());
    }

    @Test
    void aChangedCharacterInAStoredHashFailsTheCheck() {
        String tampered = MOSQUITTO_7.replace("rMAu", "rMAv");
        assertEquals(Outcome.MISMATCH, hashes.check(MOSQUITTO_7_PASSWORD.toCharArray(), tampered).outcome());
        String tamperedBcrypt = BCRYPT_2B.substring(0, 59) + "X";
        assertFalse(hashes.verify(BCRYPT_PASSWORD.toCharArray(), tamperedBcrypt));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "",
        "plaintext",
        "$1$abc$def",
        "$5$rounds=5000$salt$hash",
        "$2x$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
        "$2b$5$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
        "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOe",
        "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeWW",
        "$2b$05$CCCCCCCCCCCCCCCCCCCC!.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
        "$2b$03$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
        "$2b$",
        "$7$",
        "$7$101$",
        "$7$101$Z0N4gvcrKFLO0BeX$",
        "$7$$Z0N4gvcrKFLO0BeX$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==",
        "$7$0$Z0N4gvcrKFLO0BeX$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==",
        "$7$-5$Z0N4gvcrKFLO0BeX$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==",
        "$7$1e3$Z0N4gvcrKFLO0BeX$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==",
        "$7$101$$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==",
        "$7$101$not base64!$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==",
        "$7$101$Z0N4gvcrKFLO0BeX$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfo=",
        "$7$101$Z0N4gvcrKFLO0BeX$rMAuYvRtUfmdNY+lCkWRecl1oQQ8hKwtzDbndhfvu7l59wLMFZEb9SlDWfirFSLUKRFIvBGa7PBME6vfGfoqDA==$",
        "$6$",
        "$6$pxYw4HjecnGl4afL",
        "$6$pxYw4HjecnGl4afL$",
        "$6$$7ozSpGEfd6pS6/g8KmTHl8GdrWIHBohUa62y+b3kZONMlsAXEw/nngat5fnA6xAMnH41meelZ05m2VKjZ0umQQ==",
        "$6$pxYw4HjecnGl4afL$c2hvcnQ=",
    })
    void malformedStoredValuesAreRefusedWithAReasonAndNeverThrow(String stored) {
        PasswordCheck check = hashes.check("whatever".toCharArray(), stored);

        assertEquals(Outcome.MALFORMED, check.outcome(), stored + ": " + check.reason());
        assertFalse(check.matched());
        assertFalse(check.reason().contains(stored.length() > 8 ? stored : "\u0000"), "the reason does not quote the hash");
        assertFalse(hashes.verify("whatever".getBytes(StandardCharsets.UTF_8), stored));
    }

    @Test
    void nullStoredValueOrPasswordIsRefused() {
        assertEquals(Outcome.MALFORMED, hashes.check("pw".toCharArray(), null).outcome());
        assertEquals(Outcome.NO_PASSWORD, hashes.check((char[]) null, MOSQUITTO_7).outcome());
        assertEquals(Outcome.NO_PASSWORD, hashes.check((byte[]) null, BCRYPT_2B).outcome());
        assertFalse(hashes.verify((char[]) null, BCRYPT_2B));
    }

    @Test
    void pbkdf2IterationsAboveTheBoundAreRefusedWithoutComputing() {
        PasswordHashes bounded = new PasswordHashes(4, 14, 1000);

        // the bound itself is checked...
        assertTrue(bounded.verify(MOSQUITTO_7_1000_PASSWORD.toCharArray(), MOSQUITTO_7_1000));
        // ...one more is refused, even with the right password (the hash does not have to match the count)
        String overBound = MOSQUITTO_7_1000.replace("$7$1000$", "$7$1001$");
        PasswordCheck check = bounded.check(MOSQUITTO_7_1000_PASSWORD.toCharArray(), overBound);
        assertEquals(Outcome.TOO_COSTLY, check.outcome());
        assertTrue(check.reason().contains("1001") && check.reason().contains("1000"), check.reason());

        // the default bound refuses counts that would take minutes, also ones past an int
        for (String count : new String[] {"100001", "2147483647", "99999999999999999999999"}) {
            String absurd = MOSQUITTO_7.replace("$7$101$", "$7$" + count + "$");
            assertEquals(Outcome.TOO_COSTLY, hashes.check(MOSQUITTO_7_PASSWORD.toCharArray(), absurd).outcome(), count);
        }
        assertEquals(100_000, PasswordHashes.DEFAULT_MAX_PBKDF2_ITERATIONS);
    }

    @Test
    void bcryptCostAboveTheBoundIsRefusedWithoutComputing() {
        PasswordHashes bounded = new PasswordHashes(4, 5, 1000);
        assertTrue(bounded.verify(BCRYPT_PASSWORD.toCharArray(), BCRYPT_2B));

        String cost31 = BCRYPT_2B.replace("$2b$05$", "$2b$31$");
        assertEquals(Outcome.TOO_COSTLY, hashes.check(BCRYPT_PASSWORD.toCharArray(), cost31).outcome());
        String cost6 = BCRYPT_2B.replace("$2b$05$", "$2b$06$");
        assertEquals(Outcome.TOO_COSTLY, bounded.check(BCRYPT_PASSWORD.toCharArray(), cost6).outcome());
        String cost99 = BCRYPT_2B.replace("$2b$05$", "$2b$99$");
        assertEquals(Outcome.TOO_COSTLY, hashes.check(BCRYPT_PASSWORD.toCharArray(), cost99).outcome());
    }

    @Test
    void settingsOutOfRangeAreRejectedNamingTheValue() {
        assertThrows(IllegalArgumentException.class, () -> new PasswordHashes(3, 14, 1000));
        assertThrows(IllegalArgumentException.class, () -> new PasswordHashes(15, 14, 1000));
        assertThrows(IllegalArgumentException.class, () -> new PasswordHashes(10, 32, 1000));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new PasswordHashes(10, 14, 0));
        assertTrue(e.getMessage().contains("PBKDF2"), e.getMessage());
    }
}
