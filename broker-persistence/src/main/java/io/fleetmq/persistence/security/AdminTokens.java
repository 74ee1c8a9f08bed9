package io.fleetmq.persistence.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Bearer tokens of the admin API in PostgreSQL (table {@code admin_token}): only a SHA-256 hash of
 * each token is stored, so a token works on every node, ends when it expires, and logout revokes it.
 */
public final class AdminTokens {

    /** A token as handed to its user, once; {@link #toString()} does not show it. */
    public record Issued(String token, Instant expiresAt) {
        @Override
        public String toString() {
            return "Issued[token=(hidden), expiresAt=" + expiresAt + "]";
        }
    }

    public record Holder(String userId, String username, Instant expiresAt) {
    }

    private static final int TOKEN_BYTES = 32;

    private final DataSource dataSource;
    private final SecureRandom random = new SecureRandom();

    public AdminTokens(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * A new random token (256 bits, URL-safe Base64) for the user, valid for {@code ttl}.
     *
     * @throws IllegalArgumentException if there is no such user or {@code ttl} is not positive
     */
    public Issued issue(String userId, Duration ttl) {
        if (ttl == null || ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive");
        }
        UUID user = Jdbc.uuid(userId).orElseThrow(() -> new IllegalArgumentException("no admin user " + userId));
        byte[] bytes = new byte[TOKEN_BYTES];
        random.nextBytes(bytes);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        // PostgreSQL keeps microseconds: the time handed out is then exactly the one stored.
        Instant expiresAt = Instant.now().plus(ttl).truncatedTo(ChronoUnit.MICROS);
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement(
                     "INSERT INTO admin_token (token_hash, user_id, expires_at) VALUES (?, ?, ?)")) {
            st.setBytes(1, hash(token));
            st.setObject(2, user);
            Jdbc.setInstant(st, 3, expiresAt);
            st.executeUpdate();
            return new Issued(token, expiresAt);
        } catch (SQLException e) {
            if (Jdbc.FOREIGN_KEY_VIOLATION.equals(e.getSQLState())) {
                throw new IllegalArgumentException("no admin user " + userId);
            }
            throw Jdbc.failure("issue an admin token", e);
        }
    }

    /** The token's user if the token exists and has not expired at {@code now}. */
    public Optional<Holder> validate(String token, Instant now) {
        Objects.requireNonNull(now, "now");
        if (token == null || token.isEmpty()) {
            return Optional.empty();
        }
        String sql = "SELECT u.id, u.username, t.expires_at FROM admin_token t "
                + "JOIN admin_user u ON u.id = t.user_id WHERE t.token_hash = ? AND t.expires_at > ?";
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setBytes(1, hash(token));
            Jdbc.setInstant(st, 2, now);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Holder(rs.getString("id"), rs.getString("username"),
                        Jdbc.instant(rs, "expires_at")));
            }
        } catch (SQLException e) {
            throw Jdbc.failure("validate an admin token", e);
        }
    }

    /** @return false if there was no such token */
    public boolean revoke(String token) {
        if (token == null || token.isEmpty()) {
            return false;
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("DELETE FROM admin_token WHERE token_hash = ?")) {
            st.setBytes(1, hash(token));
            return st.executeUpdate() > 0;
        } catch (SQLException e) {
            throw Jdbc.failure("revoke an admin token", e);
        }
    }

    /** Deletes tokens expired before {@code now} (those {@link #validate} no longer accepts); returns how many. */
    public int purgeExpired(Instant now) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("DELETE FROM admin_token WHERE expires_at <= ?")) {
            Jdbc.setInstant(st, 1, Objects.requireNonNull(now, "now"));
            return st.executeUpdate();
        } catch (SQLException e) {
            throw Jdbc.failure("purge expired admin tokens", e);
        }
    }

    /** What the table keeps in place of the token. */
    static byte[] hash(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
