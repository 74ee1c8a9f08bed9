package io.fleetmq.persistence.security;

import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.Page;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * MQTT client credentials in PostgreSQL (table {@code credential}). At most one credential per
 * (user name, client ID) pair, where either may be absent. Every method throws
 * {@link java.io.UncheckedIOException}-like {@link RuntimeException}s of JDBC as {@link DataAccessException}.
 */
public final class Credentials {

    /** What a client of the API writes; {@code passwordHash} null on update keeps the stored one. */
    public record Input(String type, String username, String clientId, String passwordHash, String clientType,
            List<String> publish, List<String> subscribe) {
    }

    /** Filters of a listing; null fields do not filter. {@code text} matches user name or client ID, part of them. */
    public record Filter(String username, String clientId, String clientType, String text) {
        public static final Filter NONE = new Filter(null, null, null, null);
    }

    public Credentials(DataSource dataSource) {
        throw new UnsupportedOperationException("stub");
    }

    /** @throws ConflictException if a credential with the same user name and client ID exists */
    public Credential create(Input input) {
        throw new UnsupportedOperationException("stub");
    }

    public Optional<Credential> get(String id) {
        throw new UnsupportedOperationException("stub");
    }

    /** Ordered by user name, then client ID. */
    public Page<Credential> list(Filter filter, int page, int pageSize) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Replaces the credential's fields (a null {@code passwordHash} keeps its password).
     *
     * @return the new state, empty if there is no such credential
     * @throws ConflictException if another credential has the new user name and client ID
     */
    public Optional<Credential> update(String id, Input input) {
        throw new UnsupportedOperationException("stub");
    }

    /** @return false if there was no such credential */
    public boolean delete(String id) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * The credentials that may match a CONNECT: those naming both this user name and this client ID,
     * those naming only this user name, and those naming only this client ID, most specific first.
     * {@code username} may be null (then only client-ID credentials match).
     */
    public List<Credential> candidates(String username, String clientId) {
        throw new UnsupportedOperationException("stub");
    }
}
