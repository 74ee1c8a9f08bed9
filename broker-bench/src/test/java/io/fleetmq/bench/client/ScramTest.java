package io.fleetmq.bench.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The client's messages against the example exchange of RFC 7677 section 3. */
class ScramTest {

    private static final String CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO";
    private static final String SERVER_FIRST =
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    private static final String CLIENT_FINAL =
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    private static final String SERVER_FINAL = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void rfc7677ExchangeMessageForMessage() {
        Scram.Exchange exchange = new Scram(Scram.Algorithm.SHA_256, "user", "pencil").begin(CLIENT_NONCE);
        assertEquals("n,,n=user,r=rOprNGfwEbeRWgbNEkqO", text(exchange.clientFirst()));
        assertEquals(CLIENT_FINAL, text(exchange.clientFinal(utf8(SERVER_FIRST))));
        assertTrue(exchange.serverVerified(utf8(SERVER_FINAL)));
    }

    @Test
    void theKeysKeptFromAnEarlierExchangeGiveTheSameProof() {
        Scram scram = new Scram(Scram.Algorithm.SHA_256, "user", "pencil");
        scram.begin(CLIENT_NONCE).clientFinal(utf8(SERVER_FIRST));
        Scram.Exchange second = scram.begin(CLIENT_NONCE);
        assertEquals(CLIENT_FINAL, text(second.clientFinal(utf8(SERVER_FIRST))));
        assertTrue(second.serverVerified(utf8(SERVER_FINAL)));
    }

    @Test
    void aServerThatDoesNotKnowThePasswordIsNotBelieved() {
        Scram.Exchange exchange = new Scram(Scram.Algorithm.SHA_256, "user", "pencil").begin(CLIENT_NONCE);
        assertFalse(exchange.serverVerified(utf8(SERVER_FINAL)), "no signature before client-final");
        exchange.clientFinal(utf8(SERVER_FIRST));
        assertFalse(exchange.serverVerified(utf8("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")));
        assertFalse(exchange.serverVerified(utf8("e=invalid-proof")));
        Scram.Exchange other = new Scram(Scram.Algorithm.SHA_256, "user", "pencil2").begin(CLIENT_NONCE);
        other.clientFinal(utf8(SERVER_FIRST));
        assertFalse(other.serverVerified(utf8(SERVER_FINAL)));
    }

    @Test
    void serverFirstMustExtendOurNonce() {
        Scram.Exchange exchange = new Scram(Scram.Algorithm.SHA_256, "user", "pencil").begin(CLIENT_NONCE);
        assertThrows(IllegalArgumentException.class,
                () -> exchange.clientFinal(utf8("r=someoneElse123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")));
        assertThrows(IllegalArgumentException.class,
                () -> exchange.clientFinal(utf8("r=" + CLIENT_NONCE + ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")));
        assertThrows(IllegalArgumentException.class,
                () -> exchange.clientFinal(utf8("r=" + CLIENT_NONCE + "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0")));
    }

    @Test
    void userNamesAreEscapedAsRfc5802Asks() {
        assertEquals("n,,n=a=2Cb=3Dc,r=N", text(new Scram(Scram.Algorithm.SHA_512, "a,b=c", "p").begin("N").clientFirst()));
        assertEquals(Scram.Algorithm.SHA_512, Scram.Algorithm.parse("scram-sha-512"));
        assertEquals("SCRAM-SHA-256", Scram.Algorithm.parse("SCRAM-SHA-256").method());
        assertThrows(IllegalArgumentException.class, () -> Scram.Algorithm.parse("PLAIN"));
    }
}
