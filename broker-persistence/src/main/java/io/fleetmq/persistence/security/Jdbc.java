package io.fleetmq.persistence.security;

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
     * message is kept: the lines after it may quote the values of the statement.
     */
    static DataAccessException failure(String action, SQLException e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int newline = message.indexOf('\n');
        if (newline >= 0) {
            message = message.substring(0, newline);
        }
        String state = e.getSQLState() == null ? "" : " [" + e.getSQLState() + "]";
        return new DataAccessException("cannot " + action + ": " + message.strip() + state, e);
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
}
