package io.fleetmq.persistence.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.Page;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the embedded PostgreSQL of the test kit, in a schema of its own per test. */
class CredentialsTest {

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

    private static Credentials.Input input(String username, String clientId) {
        return new Credentials.Input(Credential.BASIC, username, clientId, "$2b$10$hash", null,
                List.of("a/#"), List.of("b/+", "c"));
    }

    private List<String> names(List<Credential> list) {
        return list.stream().map(c -> c.username() + "|" + c.clientId()).toList();
    }

    @Test
    void createsAndReadsACredential() {
        Credential created = credentials.create(new Credentials.Input(null, "alice", "dev-1", "$2b$10$x",
                "DEVICE", List.of("devices/%c/up"), List.of("devices/%c/down/#")));
        assertNotNull(UUID.fromString(created.id()));
        assertEquals(Credential.BASIC, created.type());
        assertEquals("alice", created.username());
        assertEquals("dev-1", created.clientId());
        assertEquals("$2b$10$x", created.passwordHash());
        assertEquals("DEVICE", created.clientType());
        assertEquals(List.of("devices/%c/up"), created.publish());
        assertEquals(List.of("devices/%c/down/#"), created.subscribe());
        assertNotNull(created.createdAt());
        assertEquals(created.createdAt(), created.updatedAt());

        assertEquals(created, credentials.get(created.id()).orElseThrow());
    }

    @Test
    void aCredentialWithoutRulesHasEmptyLists() {
        Credential created = credentials.create(new Credentials.Input(null, null, "app-1", null, "APPLICATION",
                null, null));
        Credential read = credentials.get(created.id()).orElseThrow();
        assertNull(read.username());
        assertNull(read.passwordHash());
        assertEquals(List.of(), read.publish());
        assertEquals(List.of(), read.subscribe());
    }

    @Test
    void malformedAndUnknownIdsAreNotFound() {
        credentials.create(input("alice", null));
        for (String id : List.of("nope", "", "1-2-3-4-5", "'; DROP TABLE credential; --", UUID.randomUUID().toString())) {
            assertTrue(credentials.get(id).isEmpty(), id);
            assertTrue(credentials.update(id, input("bob", null)).isEmpty(), id);
            assertFalse(credentials.delete(id), id);
        }
        assertTrue(credentials.get(null).isEmpty());
        assertEquals(1, credentials.list(Credentials.Filter.NONE, 0, 10).total());
    }

    @Test
    void theSameUsernameAndClientIdConflictWhereAbsentCountsAsAValue() {
        credentials.create(input("alice", "dev-1"));
        credentials.create(input("alice", null));
        credentials.create(input(null, "dev-1"));
        // An empty value is not an absent one.
        credentials.create(input("", "dev-1"));

        for (Credentials.Input again : List.of(input("alice", "dev-1"), input("alice", null), input(null, "dev-1"))) {
            ConflictException e = assertThrows(ConflictException.class, () -> credentials.create(again));
            assertEquals("a credential with this username and clientId exists", e.getMessage());
        }
        assertEquals(4, credentials.list(Credentials.Filter.NONE, 0, 10).total());
    }

    @Test
    void aCredentialMustNameAUsernameOrAClientId() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> credentials.create(input(null, null)));
        assertTrue(e.getMessage().contains("username"), e.getMessage());
        IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
                () -> credentials.create(new Credentials.Input(null, "a", null, null, "PHONE", null, null)));
        assertTrue(type.getMessage().contains("clientType"), type.getMessage());
    }

    @Test
    void updateReplacesTheFieldsAndKeepsThePasswordWhenNoneIsGiven() throws Exception {
        Credential created = credentials.create(input("alice", "dev-1"));
        Credential updated = credentials.update(created.id(), new Credentials.Input(null, "alice", "dev-2", null,
                "APPLICATION", List.of("x"), List.of())).orElseThrow();
        assertEquals(created.id(), updated.id());
        assertEquals("dev-2", updated.clientId());
        assertEquals("$2b$10$hash", updated.passwordHash());
        assertEquals("APPLICATION", updated.clientType());
        assertEquals(List.of("x"), updated.publish());
        assertEquals(List.of(), updated.subscribe());
        assertEquals(created.createdAt(), updated.createdAt());
        assertTrue(updated.updatedAt().isAfter(created.updatedAt()), updated.updatedAt() + " vs " + created.updatedAt());

        Credential rehashed = credentials.update(created.id(), new Credentials.Input(null, "alice", "dev-2", "$7$new",
                null, null, null)).orElseThrow();
        assertEquals("$7$new", rehashed.passwordHash());
        assertNull(rehashed.clientType());
        assertEquals(rehashed, credentials.get(created.id()).orElseThrow());
    }

    @Test
    void updateToAnotherCredentialsIdentityConflicts() {
        credentials.create(input("alice", null));
        Credential bob = credentials.create(input("bob", null));
        ConflictException e = assertThrows(ConflictException.class,
                () -> credentials.update(bob.id(), input("alice", null)));
        assertEquals("a credential with this username and clientId exists", e.getMessage());
        assertEquals("bob", credentials.get(bob.id()).orElseThrow().username());
        // Writing its own identity again is no conflict.
        assertTrue(credentials.update(bob.id(), input("bob", null)).isPresent());
    }

    @Test
    void deleteRemovesOnce() {
        Credential created = credentials.create(input("alice", null));
        assertTrue(credentials.delete(created.id()));
        assertFalse(credentials.delete(created.id()));
        assertTrue(credentials.get(created.id()).isEmpty());
        // Its identity is free again.
        credentials.create(input("alice", null));
    }

    @Test
    void candidatesComeMostSpecificFirst() {
        credentials.create(input(null, "dev-1"));
        credentials.create(input("alice", null));
        credentials.create(input("alice", "dev-1"));
        credentials.create(input("alice", "dev-2"));
        credentials.create(input("bob", "dev-1"));
        credentials.create(input(null, "dev-2"));

        assertEquals(List.of("alice|dev-1", "alice|null", "null|dev-1"), names(credentials.candidates("alice", "dev-1")));
        assertEquals(List.of("alice|null"), names(credentials.candidates("alice", "dev-9")));
        assertEquals(List.of("null|dev-2"), names(credentials.candidates("carol", "dev-2")));
        assertEquals(List.of(), names(credentials.candidates("carol", "dev-9")));
    }

    @Test
    void manyUserNamesAreReadInOneQueryEachWithItsCredentialsNamingAClientIdFirstUpToTheLimit() {
        credentials.create(input("alice", null));
        credentials.create(input("alice", "dev-1"));
        credentials.create(input("bob", "dev-2"));
        for (int i = 0; i < 4; i++) {
            credentials.create(input("crowd", "dev-" + i));
        }
        credentials.create(input(null, "dev-3"));

        var read = credentials.byUsernames(List.of("alice", "bob", "crowd", "nobody"), 3);
        assertEquals(java.util.Set.of("alice", "bob", "crowd"), read.keySet(), "a user name without credentials is absent");
        assertEquals(List.of("alice|dev-1", "alice|null"), names(read.get("alice")));
        assertEquals(List.of("bob|dev-2"), names(read.get("bob")));
        assertEquals(3, read.get("crowd").size(), "at most the limit of each user name");
        assertEquals(names(credentials.byUsername("alice", 3)), names(read.get("alice")), "as one user name's read");
        assertTrue(credentials.byUsernames(List.of("nobody"), 3).isEmpty());
    }

    @Test
    void theBasicLookupReturnsOnlyBasicCredentials() {
        credentials.create(input("dave", null));
        credentials.create(x509("carol", false));
        assertEquals(List.of(), names(credentials.candidates("carol", "dev-1")));
        assertEquals(List.of("dave|null"), names(credentials.candidates("dave", "dev-1")));
    }

    private static Credentials.Input x509(String commonName, boolean regex) {
        return new Credentials.Input(Credential.X509, null, null, null, "DEVICE", List.of("d/${cn}/#"), List.of(),
                commonName, regex);
    }

    @Test
    void createsReadsAndUpdatesAnX509Credential() {
        Credential created = credentials.create(x509("sensor-1", false));
        assertEquals(Credential.X509, created.type());
        assertEquals("sensor-1", created.certCommonName());
        assertFalse(created.certCommonNameRegex());
        assertNull(created.username());
        assertNull(created.clientId());
        assertNull(created.passwordHash());
        assertEquals(created, credentials.get(created.id()).orElseThrow());

        Credential updated = credentials.update(created.id(), x509("sensor-[0-9]+", true)).orElseThrow();
        assertEquals("sensor-[0-9]+", updated.certCommonName());
        assertTrue(updated.certCommonNameRegex());
        assertEquals(List.of("sensor-[0-9]+"), credentials.list(new Credentials.Filter(null, null, null, "SENSOR"), 0, 10)
                .items().stream().map(Credential::certCommonName).toList());
    }

    @Test
    void aBasicCredentialWithAPasswordBecomesAnX509OneWithout() {
        Credential basic = credentials.create(input("erin", null));
        Credential now = credentials.update(basic.id(), x509("erin-cert", false)).orElseThrow();
        assertEquals(Credential.X509, now.type());
        assertNull(now.passwordHash());
        assertNull(now.username());
    }

    @Test
    void whetherAnyCredentialExistsAndAnyBasicOneWithoutAUserName() {
        assertFalse(credentials.any());
        assertFalse(credentials.anyWithoutUsername());
        credentials.create(x509("cert-only", false));
        assertTrue(credentials.any(), "of any type");
        assertFalse(credentials.anyWithoutUsername(), "an x509 credential has no user name, and is not basic");
        Credential solo = credentials.create(input(null, "dev-solo"));
        assertTrue(credentials.anyWithoutUsername());
        credentials.update(solo.id(), input("solo-user", "dev-solo")).orElseThrow();
        assertFalse(credentials.anyWithoutUsername());
    }

    @Test
    void oneX509CredentialPerCommonNameAndManyWithoutUsernameOrClientId() {
        credentials.create(x509("a", false));
        credentials.create(x509("b", false));
        credentials.create(x509("c.*", true));
        ConflictException e = assertThrows(ConflictException.class, () -> credentials.create(x509("a", false)));
        assertEquals(Credentials.X509_CONFLICT, e.getMessage());
        assertThrows(ConflictException.class, () -> credentials.create(x509("c.*", false)));
    }

    @Test
    void anX509CredentialHasACommonNameAndNoPasswordUsernameOrClientId() {
        assertEquals("certCommonName is required for a credential of type x509", assertThrows(
                IllegalArgumentException.class, () -> credentials.create(x509(null, false))).getMessage());
        assertThrows(IllegalArgumentException.class, () -> credentials.create(x509("", false)));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> credentials.create(new Credentials.Input(
                Credential.X509, null, null, "$2b$10$hash", null, null, null, "x", false))).getMessage()
                .startsWith("password"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> credentials.create(new Credentials.Input(
                Credential.X509, "u", null, null, null, null, null, "x", false))).getMessage().startsWith("username"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> credentials.create(x509("(", true)))
                .getMessage().startsWith("certCommonName is not a valid regular expression"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> credentials.create(new Credentials.Input(
                Credential.BASIC, "u", null, null, null, null, null, "x", false))).getMessage()
                .startsWith("certCommonName is only for"));
    }

    @Test
    void x509CandidatesAreTheExactNamesOfTheChainAndEveryPattern() {
        credentials.create(x509("dev-1", false));
        credentials.create(x509("fleet-ca", false));
        credentials.create(x509("other", false));
        credentials.create(x509("dev-[0-9]+", true));
        credentials.create(input("dev-1", null));
        List<String> found = credentials.x509Candidates(List.of("dev-1", "fleet-ca")).stream()
                .map(c -> c.certCommonName() + (c.certCommonNameRegex() ? " (regex)" : "")).sorted().toList();
        assertEquals(List.of("dev-1", "dev-[0-9]+ (regex)", "fleet-ca"), found);
        assertEquals(List.of("dev-[0-9]+"), credentials.x509Candidates(List.of()).stream()
                .map(Credential::certCommonName).toList());
    }

    @Test
    void withoutAUsernameOnlyClientIdCredentialsAreCandidates() {
        credentials.create(input(null, "dev-1"));
        credentials.create(input("alice", "dev-1"));
        credentials.create(input("", "dev-1"));
        assertEquals(List.of("null|dev-1"), names(credentials.candidates(null, "dev-1")));
    }

    @Test
    void listsInOrderOfUsernameThenClientIdWithPages() {
        credentials.create(input(null, "b"));
        credentials.create(input("bob", null));
        credentials.create(input("alice", "z"));
        credentials.create(input(null, "a"));
        credentials.create(input("alice", "a"));

        Page<Credential> all = credentials.list(Credentials.Filter.NONE, 0, 10);
        assertEquals(5, all.total());
        assertEquals(List.of("alice|a", "alice|z", "bob|null", "null|a", "null|b"), names(all.items()));

        Page<Credential> second = credentials.list(null, 1, 2);
        assertEquals(5, second.total());
        assertEquals(1, second.page());
        assertEquals(2, second.pageSize());
        assertEquals(List.of("bob|null", "null|a"), names(second.items()));

        Page<Credential> beyond = credentials.list(Credentials.Filter.NONE, 7, 2);
        assertEquals(5, beyond.total());
        assertEquals(List.of(), beyond.items());

        assertThrows(IllegalArgumentException.class, () -> credentials.list(Credentials.Filter.NONE, -1, 2));
        assertThrows(IllegalArgumentException.class, () -> credentials.list(Credentials.Filter.NONE, 0, 0));
    }

    @Test
    void listFiltersByExactFieldsAndByPartOfTheNames() {
        credentials.create(input("Alice", "sensor-1"));
        credentials.create(input("alice", null));
        credentials.create(new Credentials.Input(null, null, "SENSOR-2", null, "DEVICE", null, null));
        credentials.create(new Credentials.Input(null, "backend", "app_100%", null, "APPLICATION", null, null));

        assertEquals(List.of("alice|null"), names(credentials.list(
                new Credentials.Filter("alice", null, null, null), 0, 10).items()));
        assertEquals(List.of("null|SENSOR-2"), names(credentials.list(
                new Credentials.Filter(null, "SENSOR-2", null, null), 0, 10).items()));
        assertEquals(List.of("backend|app_100%"), names(credentials.list(
                new Credentials.Filter(null, null, "APPLICATION", null), 0, 10).items()));

        Page<Credential> text = credentials.list(new Credentials.Filter(null, null, null, "sensor"), 0, 10);
        assertEquals(2, text.total());
        assertEquals(List.of("Alice|sensor-1", "null|SENSOR-2"), names(text.items()));
        assertEquals(List.of("Alice|sensor-1", "alice|null"), names(credentials.list(
                new Credentials.Filter(null, null, null, "LIC"), 0, 10).items()));
        // Wildcards of LIKE are plain characters here.
        assertEquals(List.of("backend|app_100%"), names(credentials.list(
                new Credentials.Filter(null, null, null, "_100%"), 0, 10).items()));
        assertEquals(1, credentials.list(new Credentials.Filter(null, null, null, "%"), 0, 10).total());

        Page<Credential> combined = credentials.list(new Credentials.Filter(null, null, "DEVICE", "sensor"), 0, 10);
        assertEquals(List.of("null|SENSOR-2"), names(combined.items()));
        assertEquals(1, combined.total());
    }

    @Test
    void anUnreachableDatabaseIsADataAccessExceptionOnOneLine() {
        schema.close();
        DataAccessException e = assertThrows(DataAccessException.class, () -> credentials.candidates("alice", "x"));
        assertTrue(e.getMessage().startsWith("cannot look up credentials: "), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        schema = new SecuritySchema();
    }
}
