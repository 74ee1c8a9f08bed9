package io.fleetmq.persistence.security;

import java.time.Instant;
import java.util.Optional;
import javax.sql.DataSource;

/** Users of the admin API and console in PostgreSQL (table {@code admin_user}), passwords as bcrypt hashes. */
public final class AdminUsers {

    public record AdminUser(String id, String username, String passwordHash, Instant createdAt) {
    }

    public AdminUsers(DataSource dataSource) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Creates {@code username} with {@code passwordHash} unless any admin user exists; safe when
     * several nodes start at once (exactly one creates it).
     *
     * @return true if this call created it
     */
    public boolean createFirst(String username, String passwordHash) {
        throw new UnsupportedOperationException("stub");
    }

    public Optional<AdminUser> find(String username) {
        throw new UnsupportedOperationException("stub");
    }
}
