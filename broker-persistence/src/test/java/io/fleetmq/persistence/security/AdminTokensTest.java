package io.fleetmq.persistence.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the embedded PostgreSQL of the test kit, in a schema of its own per test. */
class AdminTokensTest {

    private SecuritySchema schema;
    private AdminTokens tokens;
    private AdminUsers.AdminUser admin;

    @BeforeEach
    void open() {
        schema = new SecuritySchema();
        tokens = new AdminTokens(schema.dataSource());
        AdminUsers users = new AdminUsers(schema.dataSource());
        users.createFirst("admin", "$2b$10$hash");
        admin = users.find("admin").orElseThrow();
    }

    @AfterEach
    void close() {
        schema.close();
    }

    @Test
    void anIssuedTokenIsValidUntilItExpires() {
        Instant before = Instant.now();
        AdminTokens.Issued issued = tokens.issue(admin.id(), Duration.ofHours(1));
        assertTrue(!issued.expiresAt().isBefore(before.plus(Duration.ofHours(1)).minusMillis(1)));

        AdminTokens.Holder holder = tokens.validate(issued.token(), Instant.now()).orElseThrow();
        assertEquals(admin.id(), holder.userId());
        assertEquals("admin", holder.username());
        assertEquals(issued.expiresAt(), holder.expiresAt());

        assertTrue(tokens.validate(issued.token(), issued.expiresAt().minusNanos(1000)).isPresent());
        assertTrue(tokens.validate(issued.token(), issued.expiresAt()).isEmpty());
        assertTrue(tokens.validate(issued.token(), issued.expiresAt().plusSeconds(1)).isEmpty());
    }

    @Test
    void tokensAre256RandomBitsInUrlSafeBase64() {
        AdminTokens.Issued first = tokens.issue(admin.id(), Duration.ofMinutes(5));
        AdminTokens.Issued second = tokens.issue(admin.id(), Duration.ofMinutes(5));
        assertNotEquals(first.token(), second.token());
        assertEquals(43, first.token().length());
        assertTrue(first.token().matches("[A-Za-z0-9_-]+"), first.token());
        assertEquals(32, Base64.getUrlDecoder().decode(first.token()).length);
        assertFalse(first.toString().contains(first.token()));
    }

    @Test
    void theTableKeepsOnlyTheHashOfAToken() {
        AdminTokens.Issued issued = tokens.issue(admin.id(), Duration.ofMinutes(5));
        String stored = schema.queryString("SELECT encode(token_hash, 'hex') FROM admin_token");
        assertEquals(HexFormat.of().formatHex(AdminTokens.hash(issued.token())), stored);
        assertFalse(stored.contains(issued.token()));
        assertEquals(64, stored.length());
        assertEquals("0", schema.queryString("SELECT count(*) FROM admin_token WHERE token_hash::text LIKE '%"
                + issued.token() + "%'"));
    }

    @Test
    void unknownTokensAreNotValid() {
        tokens.issue(admin.id(), Duration.ofMinutes(5));
        assertTrue(tokens.validate("not-a-token", Instant.now()).isEmpty());
        assertTrue(tokens.validate("", Instant.now()).isEmpty());
        assertTrue(tokens.validate(null, Instant.now()).isEmpty());
    }

    @Test
    void aRevokedTokenIsNoLongerValid() {
        AdminTokens.Issued issued = tokens.issue(admin.id(), Duration.ofMinutes(5));
        AdminTokens.Issued other = tokens.issue(admin.id(), Duration.ofMinutes(5));
        assertTrue(tokens.revoke(issued.token()));
        assertFalse(tokens.revoke(issued.token()));
        assertTrue(tokens.validate(issued.token(), Instant.now()).isEmpty());
        assertTrue(tokens.validate(other.token(), Instant.now()).isPresent());
    }

    @Test
    void purgeDeletesOnlyExpiredTokens() {
        AdminTokens.Issued shortLived = tokens.issue(admin.id(), Duration.ofSeconds(1));
        AdminTokens.Issued longLived = tokens.issue(admin.id(), Duration.ofHours(1));
        assertEquals(0, tokens.purgeExpired(Instant.now().minusSeconds(60)));
        assertEquals(1, tokens.purgeExpired(shortLived.expiresAt().plusSeconds(1)));
        assertEquals("1", schema.queryString("SELECT count(*) FROM admin_token"));
        assertTrue(tokens.validate(longLived.token(), Instant.now()).isPresent());
        assertFalse(tokens.revoke(shortLived.token()));
    }

    @Test
    void deletingTheUserEndsItsTokens() {
        AdminTokens.Issued issued = tokens.issue(admin.id(), Duration.ofMinutes(5));
        schema.sql("DELETE FROM admin_user");
        assertTrue(tokens.validate(issued.token(), Instant.now()).isEmpty());
        assertEquals("0", schema.queryString("SELECT count(*) FROM admin_token"));
    }

    @Test
    void issuingForAnUnknownUserOrWithoutTimeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> tokens.issue(UUID.randomUUID().toString(), Duration.ofMinutes(5)));
        assertThrows(IllegalArgumentException.class, () -> tokens.issue("nope", Duration.ofMinutes(5)));
        assertThrows(IllegalArgumentException.class, () -> tokens.issue(admin.id(), Duration.ZERO));
        assertEquals("0", schema.queryString("SELECT count(*) FROM admin_token"));
    }
}
