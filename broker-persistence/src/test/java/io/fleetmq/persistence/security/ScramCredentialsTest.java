package io.fleetmq.persistence.security;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.scram.ScramAlgorithm;
import io.fleetmq.core.security.scram.ScramKeys;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** SCRAM credentials (migration V4) against the embedded PostgreSQL, in a schema of their own. */
class ScramCredentialsTest {

    private SecuritySchema schema;
    private Credentials credentials;

    @BeforeEach
    void open() {
        schema = new SecuritySchema();
        credentials = new Credentials(schema.dataSource());
    }

    @AfterEach
    void close() {
        schema.close();
    }

    private static Credentials.Input scram(String username, ScramKeys keys) {
        return new Credentials.Input(Credential.SCRAM, username, null, null, "DEVICE", List.of("up/${username}"),
                List.of("down/#"), keys);
    }

    @Test
    void storesTheKeysAndFindsThemByUserName() {
        ScramKeys keys = ScramKeys.derive(ScramAlgorithm.SHA_512, "pw".toCharArray());
        Credential created = credentials.create(scram("alice", keys));
        assertEquals(Credential.SCRAM, created.type());
        assertEquals(keys, created.scram());
        assertNull(created.passwordHash());
        Credential found = credentials.scram("alice").orElseThrow();
        assertEquals(created, found);
        assertArrayEquals(keys.storedKey(), found.scram().storedKey());
        assertEquals(10_000, found.scram().iterations());
        assertTrue(credentials.scram("bob").isEmpty());
    }

    @Test
    void basicLookupsNeverSeeScramCredentialsAndBothMayShareAUserName() {
        credentials.create(scram("alice", ScramKeys.derive(ScramAlgorithm.SHA_256, "pw".toCharArray())));
        assertEquals(List.of(), credentials.candidates("alice", "c1"));
        Credential basic = credentials.create(new Credentials.Input(Credential.BASIC, "alice", null, "$2b$10$h", null,
                List.of(), List.of()));
        assertEquals(List.of(basic), credentials.candidates("alice", "c1"));
        assertEquals(Credential.SCRAM, credentials.scram("alice").orElseThrow().type());
        assertThrows(ConflictException.class, () -> credentials.create(
                scram("alice", ScramKeys.derive(ScramAlgorithm.SHA_256, "pw".toCharArray()))));
    }

    @Test
    void updateWithoutKeysKeepsThemWithKeysReplacesThemAndAnotherTypeDropsThem() {
        ScramKeys first = ScramKeys.derive(ScramAlgorithm.SHA_256, "one".toCharArray());
        Credential c = credentials.create(scram("carol", first));
        Credential kept = credentials.update(c.id(), new Credentials.Input(Credential.SCRAM, "carol", null, null, null,
                List.of("x"), List.of(), null)).orElseThrow();
        assertEquals(first, kept.scram());
        assertEquals(List.of("x"), kept.publish());
        ScramKeys second = ScramKeys.derive(ScramAlgorithm.SHA_512, "two".toCharArray());
        assertEquals(second, credentials.update(c.id(), scram("carol", second)).orElseThrow().scram());
        Credential basic = credentials.update(c.id(), new Credentials.Input(Credential.BASIC, "carol", null, "$2b$10$h",
                null, List.of(), List.of())).orElseThrow();
        assertNull(basic.scram());
        assertEquals("$2b$10$h", basic.passwordHash());
        assertNotEquals(Credential.SCRAM, credentials.get(c.id()).orElseThrow().type());
    }

    @Test
    void aScramCredentialNamesAUserNameOnlyAndHasKeys() {
        ScramKeys keys = ScramKeys.derive(ScramAlgorithm.SHA_256, "pw".toCharArray());
        assertThrows(IllegalArgumentException.class, () -> credentials.create(
                new Credentials.Input(Credential.SCRAM, null, "c1", null, null, null, null, keys)));
        assertThrows(IllegalArgumentException.class, () -> credentials.create(
                new Credentials.Input(Credential.SCRAM, "u", "c1", null, null, null, null, keys)));
        assertThrows(IllegalArgumentException.class, () -> credentials.create(scram("u", null)));
    }
}
