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

    @Test
    void expiredEntriesAreDroppedOncePerTtlNotKeptUntilTheBound() {
        byte[] password = "secret".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Credential c = fleetCredential();
        for (int i = 0; i < 100; i++) {
            cache.putCandidates("fleet", "device-" + i, List.of(c));
        }
        cache.putVerified(c, password);
        assertEquals(101, cache.size());
        now.addAndGet(Duration.ofSeconds(30).toNanos());
        cache.putCandidates("fleet", "device-100", List.of(c));
        assertEquals(102, cache.size(), "nothing has expired yet");
        now.addAndGet(Duration.ofSeconds(31).toNanos());
        cache.putCandidates("fleet", "device-101", List.of(c));
        assertEquals(2, cache.size(), "the entries put 61 s ago are gone; those of 31 s ago and now stay");
        assertNull(cache.candidates("fleet", "device-0"));
        assertSame(c, cache.candidates("fleet", "device-100").get(0));
        assertEquals(false, cache.verified(c, password));
    }

    private static Credential bound(String id, String username, String clientId) {
        Instant at = Instant.parse("2026-12-01T00:00:00Z");
        return new Credential(id, "basic", username, clientId, "$2b$10$hash", null, List.of(), List.of(), at, at);
    }

    @Test
    void aUserNamesListAnswersEveryClientIdOnlyWhileNoCredentialMatchesByClientIdAlone() {
        Credential special = bound("c-2", "fleet", "dev-special");
        Credential shared = fleetCredential();
        cache.putUsername("fleet", List.of(special, shared));
        assertNull(cache.candidates("fleet", "dev-1"), "not used before it is known that none matches by client ID alone");
        cache.credentialsWithoutUsername(false);
        cache.putUsername("fleet", List.of(special, shared));
        assertEquals(List.of(shared), cache.candidates("fleet", "dev-1"));
        assertEquals(List.of(special, shared), cache.candidates("fleet", "dev-special"), "the one naming it first");
        assertNull(cache.candidates("other", "dev-1"));
        assertNull(cache.candidates(null, "dev-1"), "no user name: only pairs");

        cache.credentialsWithoutUsername(true);
        assertNull(cache.candidates("fleet", "dev-1"), "one by client ID alone exists: the list is incomplete");
        cache.credentialsWithoutUsername(false);
        assertNull(cache.candidates("fleet", "dev-1"), "and was dropped");
    }

    @Test
    void aChangedCredentialDropsTheListsThatHeldIt() {
        cache.credentialsWithoutUsername(false);
        cache.putUsername("fleet", List.of(fleetCredential()));
        cache.putUsername("others", List.of(bound("c-9", "others", null)));
        cache.forget("c-1", "renamed", null); // c-1 is now named "renamed": the list of "fleet" held it
        assertNull(cache.candidates("fleet", "dev-1"));
        assertEquals(1, cache.candidates("others", "dev-1").size());
        cache.forget("c-7", "others", null); // a new credential of "others"
        assertNull(cache.candidates("others", "dev-1"));
    }

    @Test
    void whatWasReadBeforeACredentialChangedIsNotKept() {
        cache.credentialsWithoutUsername(false);
        long readAt = cache.generation();
        cache.forget("c-1", "fleet", null); // changed while the read was under way
        cache.putUsername("fleet", List.of(fleetCredential()), readAt);
        cache.putCandidates("fleet", "dev-1", List.of(fleetCredential()), readAt);
        assertNull(cache.candidates("fleet", "dev-1"), "a read older than the change");
        long later = cache.generation();
        cache.putUsername("fleet", List.of(fleetCredential()), later);
        assertEquals(1, cache.candidates("fleet", "dev-1").size(), "a read after it is kept");
        long beforeClear = cache.generation();
        cache.clear();
        cache.putCandidates("other", "dev-2", List.of(bound("c-9", "other", null)), beforeClear);
        assertNull(cache.candidates("other", "dev-2"));
    }

    @Test
    void aChangeLeavesWhatItDoesNotConcern() {
        cache.credentialsWithoutUsername(false);
        long readAt = cache.generation();
        cache.putCandidates("fleet", "dev-1", List.of(fleetCredential()));
        cache.putCandidates("others", "dev-9", List.of(bound("c-9", "others", null)));
        cache.forget("c-9", "others", null); // another credential changed
        cache.forget("c-8", "new-user", "dev-8"); // and one was made
        cache.putUsername("fleet", List.of(fleetCredential()), readAt); // read while they changed
        assertEquals(1, cache.candidates("fleet", "dev-1").size(), "the fleet's pair is kept");
        assertEquals(1, cache.candidates("fleet", "dev-2").size(), "and the list read meanwhile");
        assertNull(cache.candidates("others", "dev-9"), "the changed credential's pair is not");

        cache.forget("c-1", null, "dev-2"); // the fleet's credential now names a client ID
        assertNull(cache.candidates("fleet", "dev-1"), "whatever held it is stale");
        assertNull(cache.candidates("fleet", "dev-2"));
    }

    @Test
    void aNewCredentialOfAClientIdMakesItsPairsStale() {
        cache.putCandidates(null, "dev-1", List.of());
        cache.putCandidates("fleet", "dev-1", List.of(fleetCredential()));
        cache.forget("c-5", null, "dev-1");
        assertNull(cache.candidates(null, "dev-1"));
        assertNull(cache.candidates("fleet", "dev-1"));
    }

    @Test
    void changesAreRememberedForTwoTtlsAtMost() {
        for (int i = 0; i < 10; i++) {
            cache.forget("c-" + i, "user-" + i, null);
        }
        assertEquals(20, cache.changesKept());
        for (int sweep = 1; sweep <= 3; sweep++) {
            now.addAndGet(Duration.ofSeconds(61).toNanos());
            cache.putCandidates("fleet", "dev-" + sweep, List.of(fleetCredential())); // a put sweeps
        }
        assertEquals(0, cache.changesKept());
        assertEquals(1, cache.candidates("fleet", "dev-3").size());

        CredentialCache off = new CredentialCache(Duration.ZERO, now::get);
        off.forget("c-1", "fleet", null);
        assertEquals(0, off.changesKept(), "nothing kept, so nothing to mark");
    }

    @Test
    void aUserNameWithTooManyCredentialsIsMarkedAndReadByPairs() {
        cache.credentialsWithoutUsername(false);
        cache.putUsername("crowd", null);
        assertEquals(true, cache.tooManyFor("crowd"));
        assertNull(cache.candidates("crowd", "dev-1"));
        now.addAndGet(Duration.ofSeconds(61).toNanos());
        assertEquals(false, cache.tooManyFor("crowd"), "until the TTL ends");
    }

    @Test
    void aFleetsListIsReturnedAsItIsWhenNoCredentialNamesAClientId() {
        List<Credential> all = List.of(fleetCredential());
        assertSame(all, CredentialCache.matching(all, "dev-1"));
    }
}
