package io.fleetmq.persistence.security;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/** Users of the admin API and console in PostgreSQL (table {@code admin_user}), passwords as bcrypt hashes. */
public final class AdminUsers {

    public record AdminUser(String id, String username, String passwordHash, Instant createdAt) {
        /** Never prints the hash. */
        @Override
        public String toString() {
            return "AdminUser[id=" + id + ", username=" + username + ", createdAt=" + createdAt + "]";
        }
    }

    /**
     * The transaction-scoped advisory lock that serialises {@link #createFirst}: without it, two nodes
     * starting on an empty table could both see it empty and both insert.
     */
    static final long FIRST_USER_LOCK = 0x666c6565_74000001L;

    private final DataSource dataSource;

    public AdminUsers(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * Creates {@code username} with {@code passwordHash} unless any admin user exists; safe when
     * several nodes start at once (exactly one creates it).
     *
     * @return true if this call created it
     */
    public boolean createFirst(String username, String passwordHash) {
        if (username == null || username.isBlank()) {
            throw new IllegalArgumentException("username must not be empty");
        }
        if (passwordHash == null || passwordHash.isEmpty()) {
            throw new IllegalArgumentException("passwordHash must not be empty");
        }
        try (Connection c = dataSource.getConnection()) {
            return Jdbc.inTransaction(c, tx -> createFirstLocked(tx, username, passwordHash));
        } catch (SQLException e) {
            throw Jdbc.failure("create the first admin user", e);
        }
    }

    private static boolean createFirstLocked(Connection c, String username, String passwordHash) throws SQLException {
        try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
            lock.setLong(1, FIRST_USER_LOCK);
            lock.execute();
        }
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT EXISTS (SELECT 1 FROM admin_user)")) {
            rs.next();
            if (rs.getBoolean(1)) {
                return false;
            }
        }
        try (PreparedStatement insert = c.prepareStatement(
                "INSERT INTO admin_user (username, password_hash) VALUES (?, ?)")) {
            insert.setString(1, username);
            insert.setString(2, passwordHash);
            insert.executeUpdate();
        }
        return true;
    }

    public Optional<AdminUser> find(String username) {
        if (username == null) {
            return Optional.empty();
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement(
                     "SELECT id, username, password_hash, created_at FROM admin_user WHERE username = ?")) {
            st.setString(1, username);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new AdminUser(rs.getString("id"), rs.getString("username"),
                        rs.getString("password_hash"), Jdbc.instant(rs, "created_at")));
            }
        } catch (SQLException e) {
            throw Jdbc.failure("read an admin user", e);
        }
    }
}
