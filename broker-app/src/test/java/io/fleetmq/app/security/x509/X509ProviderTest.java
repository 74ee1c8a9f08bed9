package io.fleetmq.app.security.x509;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.Credential;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Which credential wins for a chain: pure logic, the store is not used. */
class X509ProviderTest {

    private final X509Provider provider = new X509Provider(null, Duration.ofSeconds(60));
    private static final List<String> CHAIN = List.of("sensor-7", "line-3-ca", "Device Root");
    private int created;

    private Credential credential(String name, boolean regex) {
        created++;
        return new Credential("id-" + name, Credential.X509, null, null, null, null, List.of(), List.of(),
                Instant.EPOCH.plusSeconds(created), Instant.EPOCH, name, regex);
    }

    private String best(Credential... candidates) {
        Optional<Credential> c = provider.best(CHAIN, Arrays.asList(candidates));
        return c.map(Credential::certCommonName).orElse(null);
    }

    @Test
    @DisplayName("exact leaf over exact intermediate over pattern, whatever the order of the candidates")
    void theMostSpecificCredentialWins() {
        Credential leaf = credential("sensor-7", false);
        Credential ca = credential("line-3-ca", false);
        Credential root = credential("Device Root", false);
        Credential pattern = credential("sensor-[0-9]+", true);
        assertEquals("sensor-7", best(pattern, root, ca, leaf));
        assertEquals("line-3-ca", best(pattern, root, ca));
        assertEquals("Device Root", best(pattern, root));
        assertEquals("sensor-[0-9]+", best(pattern, credential("line-.*", true)), "a pattern nearer the leaf first");
        assertEquals("line-.*", best(credential("line-.*", true)));
    }

    @Test
    @DisplayName("a pattern must match the whole CN; an invalid pattern or another type matches nothing")
    void patternsMatchWholeNames() {
        assertEquals(null, best(credential("sensor", true)));
        assertEquals(null, best(credential("ensor-7", true)));
        assertEquals(null, best(credential("sensor-[", true)));
        assertEquals(null, best(new Credential("b", Credential.BASIC, "sensor-7", null, null, null, List.of(),
                List.of(), Instant.EPOCH, Instant.EPOCH)));
        assertEquals(null, best());
        assertEquals("sensor-\\d", best(credential("sensor-\\d", true)));
    }

    @Test
    @DisplayName("two patterns matching the same certificate: the older credential wins")
    void tiesGoToTheOlderCredential() {
        Credential older = credential("sensor-.*", true);
        Credential newer = credential(".*-7", true);
        assertEquals("sensor-.*", best(newer, older));
        assertTrue(older.createdAt().isBefore(newer.createdAt()));
    }
}
