package io.fleetmq.persistence.security;

import io.fleetmq.core.security.Page;
import io.fleetmq.core.security.RefusedConnection;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;

/**
 * The log of refused connections in PostgreSQL (table {@code refused_connection}): one row per client
 * ID, holding its latest refusal and a count. Nodes write it in batches.
 */
public final class RefusedConnections {

    /** Filters of a listing; null fields do not filter; {@code clientId}, {@code username} and {@code address} match part of the value. */
    public record Filter(String clientId, String username, String address, String reason) {
        public static final Filter NONE = new Filter(null, null, null, null);
    }

    public RefusedConnections(DataSource dataSource) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Adds a batch: each entry's {@code count} refusals, the latest at {@code lastAt}, to the row of its
     * client ID (created if missing, its details replaced by the entry's when newer). One transaction.
     */
    public void record(List<RefusedConnection> batch) {
        throw new UnsupportedOperationException("stub");
    }

    /** Latest refusal first. */
    public Page<RefusedConnection> list(Filter filter, int page, int pageSize) {
        throw new UnsupportedOperationException("stub");
    }

    /** Deletes rows whose latest refusal is before {@code cutoff}; returns how many. */
    public int purgeBefore(Instant cutoff) {
        throw new UnsupportedOperationException("stub");
    }
}
