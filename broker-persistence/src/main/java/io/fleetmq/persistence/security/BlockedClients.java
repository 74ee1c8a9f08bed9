package io.fleetmq.persistence.security;

import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.Page;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/** Blocked clients in PostgreSQL (table {@code blocked_client}). */
public final class BlockedClients {

    public BlockedClients(DataSource dataSource) {
        throw new UnsupportedOperationException("stub");
    }

    /** @throws ConflictException if the same type, value and target are already blocked */
    public BlockEntry create(String type, String value, String target, Instant expiresAt) {
        throw new UnsupportedOperationException("stub");
    }

    public Optional<BlockEntry> get(String id) {
        throw new UnsupportedOperationException("stub");
    }

    /** Newest first; {@code type} null lists all types. Expired entries are listed too (with their time). */
    public Page<BlockEntry> list(String type, int page, int pageSize) {
        throw new UnsupportedOperationException("stub");
    }

    public boolean delete(String id) {
        throw new UnsupportedOperationException("stub");
    }

    /** Every entry not expired at {@code now}: what nodes match CONNECTs against. */
    public List<BlockEntry> active(Instant now) {
        throw new UnsupportedOperationException("stub");
    }
}
