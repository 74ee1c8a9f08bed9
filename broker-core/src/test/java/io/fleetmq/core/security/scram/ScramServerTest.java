package io.fleetmq.core.security.scram;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class ScramServerTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("RFC 7677 3: the SCRAM-SHA-256 example exchange gives the RFC's server-first and server-final messages")
    void rfc7677Example() throws Exception {
        byte[] salt = Base64.getDecoder().decode("W22ZaJ0SNY7soEsUEjb6gQ==");
        ScramKeys keys = ScramKeys.derive(ScramAlgorithm.SHA_256, "pencil".toCharArray(), salt, 4096);
        ScramServer.ClientFirst first = ScramServer.parseClientFirst(utf8("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"));
        assertEquals("user", first.username());
        ScramServer.Exchange exchange = ScramServer.serverFirst(first, keys, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
        assertEquals("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
                text(exchange.serverFirst()));
        byte[] serverFinal = exchange.finish(utf8("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                + "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="));
        assertEquals("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", text(serverFinal));
    }

    @ParameterizedTest
    @EnumSource(ScramAlgorithm.class)
    @DisplayName("A client that knows the password completes the exchange and can verify the server's signature")
    void roundTrip(ScramAlgorithm algorithm) throws Exception {
        ScramKeys keys = ScramKeys.derive(algorithm, "correct horse".toCharArray());
        assertEquals(algorithm.defaultIterations(), keys.iterations());
        TestClient client = new TestClient(algorithm, "dev,ice=1", "correct horse");
        ScramServer.ClientFirst first = ScramServer.parseClientFirst(client.first());
        assertEquals("dev,ice=1", first.username());
        ScramServer.Exchange exchange = ScramServer.serverFirst(first, keys, ScramServer.newNonce());
        byte[] serverFinal = exchange.finish(client.finalMessage(exchange.serverFirst()));
        assertTrue(client.serverVerified(serverFinal));
    }

    @Test
    @DisplayName("PBKDF2 of the JDK and the server's Hi() agree, so the stored form is the standard one")
    void hiIsPbkdf2() throws Exception {
        byte[] salt = utf8("saltsaltsaltsalt");
        for (ScramAlgorithm a : ScramAlgorithm.values()) {
            byte[] jdk = SecretKeyFactory.getInstance("PBKDF2WithHmac" + a.apiName().replace("-", ""))
                    .generateSecret(new PBEKeySpec("pw".toCharArray(), salt, 100, a == ScramAlgorithm.SHA_256 ? 256 : 512))
                    .getEncoded();
            assertArrayEquals(jdk, ScramKeys.hi(a, utf8("pw"), salt, 100));
        }
    }

    @ParameterizedTest
    @EnumSource(ScramAlgorithm.class)
    @DisplayName("A wrong password gives a wrong proof")
    void wrongPassword(ScramAlgorithm algorithm) throws Exception {
        ScramKeys keys = ScramKeys.derive(algorithm, "right".toCharArray());
        TestClient client = new TestClient(algorithm, "u", "wrong");
        ScramServer.Exchange exchange = ScramServer.serverFirst(ScramServer.parseClientFirst(client.first()), keys,
                ScramServer.newNonce());
        ScramException e = assertThrows(ScramException.class,
                () -> exchange.finish(client.finalMessage(exchange.serverFirst())));
        assertEquals(ScramException.Kind.INVALID_PROOF, e.kind());
    }

    @Test
    @DisplayName("An unknown user gets a server-first like any other, stable salt per user name, and fails at the proof")
    void unknownUser() throws Exception {
        byte[] secret = utf8("node secret");
        ScramKeys a = ScramServer.unknownUser(ScramAlgorithm.SHA_256, "ghost", secret);
        ScramKeys b = ScramServer.unknownUser(ScramAlgorithm.SHA_256, "ghost", secret);
        assertArrayEquals(a.salt(), b.salt());
        assertNotEquals(Base64.getEncoder().encodeToString(a.salt()),
                Base64.getEncoder().encodeToString(ScramServer.unknownUser(ScramAlgorithm.SHA_256, "other", secret).salt()));
        TestClient client = new TestClient(ScramAlgorithm.SHA_256, "ghost", "anything");
        ScramServer.Exchange exchange = ScramServer.serverFirst(ScramServer.parseClientFirst(client.first()), a,
                ScramServer.newNonce());
        assertEquals(ScramException.Kind.INVALID_PROOF, assertThrows(ScramException.class,
                () -> exchange.finish(client.finalMessage(exchange.serverFirst()))).kind());
    }

    @Test
    @DisplayName("client-final with another nonce than the exchange's is refused")
    void nonceMismatch() throws Exception {
        ScramKeys keys = ScramKeys.derive(ScramAlgorithm.SHA_256, "pw".toCharArray());
        TestClient client = new TestClient(ScramAlgorithm.SHA_256, "u", "pw");
        ScramServer.Exchange exchange = ScramServer.serverFirst(ScramServer.parseClientFirst(client.first()), keys,
                ScramServer.newNonce());
        String tampered = text(exchange.serverFirst()).replaceFirst("r=([^,]*)", "r=$1X");
        ScramException e = assertThrows(ScramException.class, () -> exchange.finish(client.finalMessage(utf8(tampered))));
        assertEquals(ScramException.Kind.NONCE_MISMATCH, e.kind());
    }

    @Test
    @DisplayName("An exchange is decided once: the same client-final a second time is refused")
    void finishOnce() throws Exception {
        ScramKeys keys = ScramKeys.derive(ScramAlgorithm.SHA_256, "pw".toCharArray());
        TestClient client = new TestClient(ScramAlgorithm.SHA_256, "u", "pw");
        ScramServer.Exchange exchange = ScramServer.serverFirst(ScramServer.parseClientFirst(client.first()), keys,
                ScramServer.newNonce());
        byte[] clientFinal = client.finalMessage(exchange.serverFirst());
        exchange.finish(clientFinal);
        assertThrows(ScramException.class, () -> exchange.finish(clientFinal));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "n,,", "n,,n=user", "n,,r=abc,n=user", "x,,n=user,r=abc", "n,,n=,r=abc",
            "n,,n=us=er,r=abc", "n,,n=user,r=", "n,,n=user,r=a b", "n,,n=user,x=abc"})
    @DisplayName("Malformed client-first messages are refused as malformed")
    void malformedClientFirst(String message) {
        ScramException e = assertThrows(ScramException.class, () -> ScramServer.parseClientFirst(utf8(message)));
        assertEquals(ScramException.Kind.MALFORMED, e.kind());
    }

    @ParameterizedTest
    @ValueSource(strings = {"p=tls-unique,,n=user,r=abc", "y,,n=user,r=abc", "n,a=admin,n=user,r=abc",
            "n,,m=ext,n=user,r=abc"})
    @DisplayName("Channel binding, an authorization identity and mandatory extensions are not supported")
    void unsupportedClientFirst(String message) {
        ScramException e = assertThrows(ScramException.class, () -> ScramServer.parseClientFirst(utf8(message)));
        assertEquals(ScramException.Kind.UNSUPPORTED, e.kind());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "c=biws,r=NONCE", "r=NONCE,c=biws,p=AAAA", "c=eSws,r=NONCE,p=AAAA",
            "c=biws,r=NONCE,p=not base64!", "c=biws,r=NONCE,e=x,p=AAAA"})
    @DisplayName("Malformed client-final messages are refused")
    void malformedClientFinal(String message) throws Exception {
        ScramKeys keys = ScramKeys.derive(ScramAlgorithm.SHA_256, "pw".toCharArray());
        ScramServer.Exchange exchange = ScramServer.serverFirst(ScramServer.parseClientFirst(utf8("n,,n=u,r=abc")), keys,
                "def");
        ScramException e = assertThrows(ScramException.class,
                () -> exchange.finish(utf8(message.replace("NONCE", "abcdef"))));
        assertEquals(ScramException.Kind.MALFORMED, e.kind());
    }

    @Test
    @DisplayName("The stored form never holds the password, and its toString shows no key")
    void storedForm() {
        ScramKeys keys = ScramKeys.derive(ScramAlgorithm.SHA_512, "hunter2".toCharArray());
        assertEquals(64, keys.storedKey().length);
        assertEquals(64, keys.serverKey().length);
        assertEquals(ScramKeys.SALT_BYTES, keys.salt().length);
        assertEquals("ScramKeys[SHA-512, iterations=10000]", keys.toString());
        assertThrows(IllegalArgumentException.class, () -> ScramKeys.derive(ScramAlgorithm.SHA_256, new char[0]));
    }

    @Test
    @DisplayName("Mechanism names map to algorithms, case-insensitively; others to none")
    void mechanisms() {
        assertEquals(ScramAlgorithm.SHA_256, ScramAlgorithm.ofMechanism("SCRAM-SHA-256"));
        assertEquals(ScramAlgorithm.SHA_512, ScramAlgorithm.ofMechanism("scram-sha-512"));
        assertEquals(null, ScramAlgorithm.ofMechanism("SCRAM-SHA-1"));
        assertEquals(ScramAlgorithm.SHA_512, ScramAlgorithm.ofApiName("SHA-512"));
        assertEquals(null, ScramAlgorithm.ofApiName("SHA-1"));
    }

    /** The client side, written from RFC 5802 with the JDK's PBKDF2, independent of the server's code. */
    static final class TestClient {
        private final ScramAlgorithm algorithm;
        private final String bare;
        private final String password;
        private byte[] saltedPassword;
        private String authMessage;

        TestClient(ScramAlgorithm algorithm, String username, String password) {
            this.algorithm = algorithm;
            this.bare = "n=" + username.replace("=", "=3D").replace(",", "=2C") + ",r=clientNonce123";
            this.password = password;
        }

        byte[] first() {
            return utf8("n,," + bare);
        }

        byte[] finalMessage(byte[] serverFirst) throws Exception {
            String sf = text(serverFirst);
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
            int bits = algorithm == ScramAlgorithm.SHA_256 ? 256 : 512;
            saltedPassword = SecretKeyFactory.getInstance("PBKDF2WithHmac" + algorithm.apiName().replace("-", ""))
                    .generateSecret(new PBEKeySpec(password.toCharArray(), salt, iterations, bits)).getEncoded();
            String withoutProof = "c=biws,r=" + nonce;
            authMessage = bare + "," + sf + "," + withoutProof;
            byte[] clientKey = hmac(saltedPassword, "Client Key");
            byte[] storedKey = java.security.MessageDigest.getInstance(algorithm.apiName()).digest(clientKey);
            byte[] signature = hmac(storedKey, authMessage);
            for (int i = 0; i < clientKey.length; i++) {
                clientKey[i] ^= signature[i];
            }
            return utf8(withoutProof + ",p=" + Base64.getEncoder().encodeToString(clientKey));
        }

        boolean serverVerified(byte[] serverFinal) throws Exception {
            byte[] expected = hmac(hmac(saltedPassword, "Server Key"), authMessage);
            return ("v=" + Base64.getEncoder().encodeToString(expected)).equals(text(serverFinal));
        }

        private byte[] hmac(byte[] key, String data) throws Exception {
            String name = "Hmac" + algorithm.apiName().replace("-", "");
            Mac mac = Mac.getInstance(name);
            mac.init(new SecretKeySpec(key, name));
            return mac.doFinal(utf8(data));
        }
    }
}
