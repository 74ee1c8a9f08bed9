package io.fleetmq.persistence.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import org.bouncycastle.crypto.digests.SHA512Digest;
import org.bouncycastle.crypto.generators.PKCS5S2ParametersGenerator;
import org.bouncycastle.crypto.params.KeyParameter;
import org.junit.jupiter.api.Test;

class Pbkdf2Sha512Test {

    @Test
    void publishedVectors() {
        assertArrayEquals(HexFormat.of().parseHex("867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252"
                        + "c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce"),
                Pbkdf2Sha512.derive(ascii("password"), ascii("salt"), 1, 64));
        assertArrayEquals(HexFormat.of().parseHex("8c0511f4c6e597c6ac6315d8f0362e225f3c501495ba23b868c005174dc4ee71"
                        + "115b59f9e60cd9532fa33e0f75aefe30225c583a186cd82bd4daea9724a3d3b8"),
                Pbkdf2Sha512.derive(ascii("passwordPASSWORDpassword"), ascii("saltSALTsaltSALTsaltSALTsaltSALTsalt"),
                        4096, 64));
    }

    /** Binary and empty passwords, keys longer than a block, salts spanning blocks, keys of several blocks. */
    @Test
    void agreesWithBouncyCastleOnAnyBytes() {
        Random random = new Random(20261206);
        for (int n = 0; n < 1_000; n++) {
            byte[] password = bytes(random, random.nextInt(300));
            byte[] salt = bytes(random, 1 + random.nextInt(300));
            int iterations = 1 + random.nextInt(4);
            int length = 1 + random.nextInt(200);
            assertArrayEquals(bouncyCastle(password, salt, iterations, length),
                    Pbkdf2Sha512.derive(password, salt, iterations, length),
                    "password of " + password.length + " bytes, salt of " + salt.length + ", " + iterations
                            + " iterations, " + length + " bytes of key");
        }
    }

    @Test
    void agreesWithTheJdkAtMosquittosCounts() throws Exception {
        Random random = new Random(7);
        for (int iterations : new int[] {101, 1_000, 20_000}) {
            String password = "pw-device-" + random.nextInt(1_000_000);
            byte[] salt = bytes(random, 12);
            assertArrayEquals(jdk(password, salt, iterations), Pbkdf2Sha512.derive(ascii(password), salt, iterations, 64),
                    iterations + " iterations");
        }
        String longer = "x".repeat(129); // hashed first, as a key longer than a block
        assertArrayEquals(jdk(longer, ascii("salt"), 101), Pbkdf2Sha512.derive(ascii(longer), ascii("salt"), 101, 64));
    }

    @Test
    void refusesNoIterationsOrNoKey() {
        assertThrows(IllegalArgumentException.class, () -> Pbkdf2Sha512.derive(ascii("pw"), ascii("salt"), 0, 64));
        assertThrows(IllegalArgumentException.class, () -> Pbkdf2Sha512.derive(ascii("pw"), ascii("salt"), 1, 0));
    }

    private static byte[] bouncyCastle(byte[] password, byte[] salt, int iterations, int length) {
        PKCS5S2ParametersGenerator generator = new PKCS5S2ParametersGenerator(new SHA512Digest());
        generator.init(password, salt, iterations);
        return ((KeyParameter) generator.generateDerivedParameters(length * 8)).getKey();
    }

    private static byte[] jdk(String password, byte[] salt, int iterations) throws Exception {
        return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA512")
                .generateSecret(new PBEKeySpec(password.toCharArray(), salt, iterations, 512)).getEncoded();
    }

    private static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
