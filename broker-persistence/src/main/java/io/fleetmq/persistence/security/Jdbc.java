package io.fleetmq.persistence.security;

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.UUID;

/** What the security stores share in talking to PostgreSQL: ids, times and turning failures into exceptions. */
final class Jdbc {

    static final String UNIQUE_VIOLATION = "23505";
    static final String FOREIGN_KEY_VIOLATION = "23503";

    private Jdbc() {
    }

    /** Work on a connection inside a transaction. */
    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction on {@code c}: committed when it returns, rolled back when
     * it throws; the connection's auto-commit mode is restored either way.
     */
    static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            T result = work.run(c);
            c.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /** The id as a UUID, or empty when it cannot be one (then no row has it). */
    static Optional<UUID> uuid(String id) {
        if (id == null) {
            return Optional.empty();
        }
        try {
            UUID uuid = UUID.fromString(id);
            // fromString accepts short groups such as "1-2-3-4-5"; only the canonical form names a row.
            return uuid.toString().equalsIgnoreCase(id) ? Optional.of(uuid) : Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    static void setInstant(PreparedStatement st, int index, Instant instant) throws SQLException {
        st.setObject(index, instant == null ? null : OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime time = rs.getObject(column, OffsetDateTime.class);
        return time == null ? null : time.toInstant();
    }

    static boolean isUniqueViolation(SQLException e) {
        return UNIQUE_VIOLATION.equals(e.getSQLState());
    }

    /**
     * A one-line failure for {@code action} ("list credentials"). Only the first line of the driver's
     * message is kept, and the cause keeps no more when the server rejected a statement: the lines
     * after it may quote the statement's values (a failing row shows its password hash). A failed
     * batch reports the entry's own error, not the batch's message, which quotes the statement.
     */
    static DataAccessException failure(String action, SQLException e) {
        SQLException error = e instanceof BatchUpdateException && e.getNextException() != null ? e.getNextException() : e;
        String line = firstLine(error);
        String state = error.getSQLState() == null ? "" : " [" + error.getSQLState() + "]";
        return new DataAccessException("cannot " + action + ": " + line + state, reportable(error, line));
    }

    private static String firstLine(SQLException e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int newline = message.indexOf('\n');
        return (newline >= 0 ? message.substring(0, newline) : message).strip();
    }

    /** Connection failures keep their whole cause; a rejected statement only its first line and stack. */
    private static SQLException reportable(SQLException e, String line) {
        String state = e.getSQLState();
        if (state == null || state.startsWith("08")) {
            return e;
        }
        SQLException bare = new SQLException(line, state, e.getErrorCode());
        bare.setStackTrace(e.getStackTrace());
        return bare;
    }

    static void checkPage(int page, int pageSize) {
        if (page < 0) {
            throw new IllegalArgumentException("page must be 0 or more, was " + page);
        }
        if (pageSize < 1) {
            throw new IllegalArgumentException("pageSize must be 1 or more, was " + pageSize);
        }
    }

    static long offset(int page, int pageSize) {
        return (long) page * pageSize;
    }

    /** Reads one row. */
    @FunctionalInterface
    interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /**
     * One page of {@code table}'s rows that {@code where} selects, in {@code orderBy} order, with the
     * count of all of them.
     */
    static <T> io.fleetmq.core.security.Page<T> page(javax.sql.DataSource dataSource, String table, String columns,
            Conditions where, String orderBy, int page, int pageSize, RowReader<T> reader, String action) {
        checkPage(page, pageSize);
        try (java.sql.Connection c = dataSource.getConnection()) {
            long total;
            try (PreparedStatement st = c.prepareStatement("SELECT count(*) FROM " + table + where.where())) {
                where.bind(st);
                try (ResultSet rs = st.executeQuery()) {
                    rs.next();
                    total = rs.getLong(1);
                }
            }
            java.util.List<T> items = new java.util.ArrayList<>();
            String sql = "SELECT " + columns + " FROM " + table + where.where() + " ORDER BY " + orderBy
                    + " LIMIT ? OFFSET ?";
            try (PreparedStatement st = c.prepareStatement(sql)) {
                int next = where.bind(st);
                st.setInt(next, pageSize);
                st.setLong(next + 1, offset(page, pageSize));
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        items.add(reader.read(rs));
                    }
                }
            }
            return new io.fleetmq.core.security.Page<>(items, total, page, pageSize);
        } catch (SQLException e) {
            throw failure(action, e);
        }
    }
}
