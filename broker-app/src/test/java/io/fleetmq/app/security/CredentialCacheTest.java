package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.fleetmq.core.security.Credential;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CredentialCacheTest {

    private final AtomicLong now = new AtomicLong();
    private final CredentialCache cache = new CredentialCache(Duration.ofSeconds(60), now::get);

    /** A fresh copy, as each read from PostgreSQL makes one. */
    private static Credential fleetCredential() {
        Instant at = Instant.parse("2026-12-01T00:00:00Z");
        return new Credential(new String("c-1"), "basic", new String("fleet"), null, new String("$2b$10$hash"),
                null, List.of(new String("devices/#")), List.of(new String("devices/#")), at, at);
    }

    @Test
    void devicesSharingACredentialShareOneCopyOfIt() {
        Credential first = fleetCredential();
        Credential second = fleetCredential();
        assertNotSame(first, second);
        cache.putCandidates("fleet", "device-1", List.of(first));
        cache.putCandidates("fleet", "device-2", List.of(second));
        assertSame(cache.candidates("fleet", "device-1").get(0), cache.candidates("fleet", "device-2").get(0));
        assertEquals(second, cache.candidates("fleet", "device-2").get(0));
    }

    @Test
    void aChangedCredentialIsNotReplacedByTheCopyHeldBefore() {
        cache.putCandidates("fleet", "device-1", List.of(fleetCredential()));
        cache.forget("c-1", "fleet", null);
        assertNull(cache.candidates("fleet", "device-1"));
        Instant at = Instant.parse("2026-12-01T00:00:00Z");
        Credential changed = new Credential("c-1", "basic", "fleet", null, "$2b$10$other", null, List.of("devices/#"),
                List.of(), at, at.plusSeconds(5));
        cache.putCandidates("fleet", "device-2", List.of(changed));
        assertSame(changed, cache.candidates("fleet", "device-2").get(0));
    }

    @Test
    void entriesEndWithTheirTtl() {
        cache.putCandidates("fleet", "device-1", List.of(fleetCredential()));
        now.addAndGet(Duration.ofSeconds(61).toNanos());
        assertNull(cache.candidates("fleet", "device-1"));
    }
}
