package io.fleetmq.persistence.security;

import io.fleetmq.core.security.Page;
import io.fleetmq.core.security.RefusedConnection;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
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

    private static final String COLUMNS = "client_id, username, address, password_given, tls, reason, first_at, "
            + "last_at, count";

    /**
     * Counts add up and the earliest first refusal stays; the details are the newest refusal's, so a
     * batch that arrives late from a slow node does not overwrite what a newer one wrote.
     */
    private static final String UPSERT = "INSERT INTO refused_connection AS r (" + COLUMNS + ") "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            + "ON CONFLICT (client_id) DO UPDATE SET "
            + "count = r.count + excluded.count, "
            + "first_at = least(r.first_at, excluded.first_at), "
            + "username = CASE WHEN excluded.last_at > r.last_at THEN excluded.username ELSE r.username END, "
            + "address = CASE WHEN excluded.last_at > r.last_at THEN excluded.address ELSE r.address END, "
            + "password_given = CASE WHEN excluded.last_at > r.last_at "
            + "THEN excluded.password_given ELSE r.password_given END, "
            + "tls = CASE WHEN excluded.last_at > r.last_at THEN excluded.tls ELSE r.tls END, "
            + "reason = CASE WHEN excluded.last_at > r.last_at THEN excluded.reason ELSE r.reason END, "
            + "last_at = greatest(r.last_at, excluded.last_at)";

    private final DataSource dataSource;

    public RefusedConnections(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * Adds a batch: each entry's {@code count} refusals, the latest at {@code lastAt}, to the row of its
     * client ID (created if missing, its details replaced by the entry's when newer). One transaction.
     * An entry without {@code firstAt} starts at its {@code lastAt}.
     */
    public void record(List<RefusedConnection> batch) {
        if (batch == null || batch.isEmpty()) {
            return;
        }
        batch.forEach(RefusedConnections::check);
        // Rows are locked in client ID order, so two nodes writing overlapping batches cannot deadlock.
        List<RefusedConnection> ordered = new ArrayList<>(batch);
        ordered.sort(Comparator.comparing(RefusedConnection::clientId));
        try (Connection c = dataSource.getConnection()) {
            Jdbc.inTransaction(c, tx -> {
                try (PreparedStatement st = tx.prepareStatement(UPSERT)) {
                    for (RefusedConnection entry : ordered) {
                        st.setString(1, entry.clientId());
                        st.setString(2, entry.username());
                        st.setString(3, entry.address());
                        st.setBoolean(4, entry.passwordGiven());
                        st.setBoolean(5, entry.tls());
                        st.setString(6, entry.reason());
                        Jdbc.setInstant(st, 7, entry.firstAt() == null ? entry.lastAt() : entry.firstAt());
                        Jdbc.setInstant(st, 8, entry.lastAt());
                        st.setLong(9, entry.count());
                        st.addBatch();
                    }
                    st.executeBatch();
                }
                return null;
            });
        } catch (SQLException e) {
            throw Jdbc.failure("record " + batch.size() + " refused connections", e);
        }
    }

    /** Latest refusal first. */
    public Page<RefusedConnection> list(Filter filter, int page, int pageSize) {
        Jdbc.checkPage(page, pageSize);
        Filter f = filter == null ? Filter.NONE : filter;
        Conditions where = new Conditions()
                .contains(f.clientId(), "client_id")
                .contains(f.username(), "username")
                .contains(f.address(), "address")
                .equal("reason", f.reason());
        return Jdbc.page(dataSource, "refused_connection", COLUMNS, where, "last_at DESC, client_id", page, pageSize,
                RefusedConnections::read, "list refused connections");
    }

    /** Deletes rows whose latest refusal is before {@code cutoff}; returns how many. */
    public int purgeBefore(Instant cutoff) {
        Objects.requireNonNull(cutoff, "cutoff");
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("DELETE FROM refused_connection WHERE last_at < ?")) {
            Jdbc.setInstant(st, 1, cutoff);
            return st.executeUpdate();
        } catch (SQLException e) {
            throw Jdbc.failure("purge refused connections", e);
        }
    }

    private static void check(RefusedConnection entry) {
        if (entry == null) {
            throw new IllegalArgumentException("a refused connection is missing");
        }
        if (entry.clientId() == null) {
            throw new IllegalArgumentException("clientId must not be null (\"\" when the CONNECT had none)");
        }
        if (entry.reason() == null) {
            throw new IllegalArgumentException("reason must not be null");
        }
        if (entry.lastAt() == null) {
            throw new IllegalArgumentException("lastAt must not be null");
        }
        if (entry.count() < 1) {
            throw new IllegalArgumentException("count must be 1 or more, was " + entry.count());
        }
    }

    private static RefusedConnection read(ResultSet rs) throws SQLException {
        return new RefusedConnection(rs.getString("client_id"), rs.getString("username"), rs.getString("address"),
                rs.getBoolean("password_given"), rs.getBoolean("tls"), rs.getString("reason"),
                Jdbc.instant(rs, "first_at"), Jdbc.instant(rs, "last_at"), rs.getLong("count"));
    }
}
