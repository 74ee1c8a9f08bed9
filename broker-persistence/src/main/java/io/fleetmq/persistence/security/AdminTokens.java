package io.fleetmq.persistence.security;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Bearer tokens of the admin API in PostgreSQL (table {@code admin_token}): only a SHA-256 hash of
 * each token is stored, so a token works on every node, ends when it expires, and logout revokes it.
 */
public final class AdminTokens {

    public record Issued(String token, Instant expiresAt) {
    }

    public record Holder(String userId, String username, Instant expiresAt) {
    }

    public AdminTokens(DataSource dataSource) {
        throw new UnsupportedOperationException("stub");
    }

    /** A new random token (256 bits, URL-safe Base64) for the user, valid for {@code ttl}. */
    public Issued issue(String userId, Duration ttl) {
        throw new UnsupportedOperationException("stub");
    }

    /** The token's user if the token exists and has not expired at {@code now}. */
    public Optional<Holder> validate(String token, Instant now) {
        throw new UnsupportedOperationException("stub");
    }

    /** @return false if there was no such token */
    public boolean revoke(String token) {
        throw new UnsupportedOperationException("stub");
    }

    /** Deletes tokens expired before {@code now}; returns how many. */
    public int purgeExpired(Instant now) {
        throw new UnsupportedOperationException("stub");
    }
}
