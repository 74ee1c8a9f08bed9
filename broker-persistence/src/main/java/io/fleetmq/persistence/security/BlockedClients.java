package io.fleetmq.persistence.security;

import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.Page;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Blocked clients in PostgreSQL (table {@code blocked_client}). Failures of PostgreSQL are thrown as
 * {@link DataAccessException}, input it cannot store as {@link IllegalArgumentException} naming the field.
 */
public final class BlockedClients {

    static final String CONFLICT = "this type, value and target are already blocked";

    private static final Set<String> TYPES = Set.of(BlockEntry.CLIENT_ID, BlockEntry.USERNAME, BlockEntry.IP,
            BlockEntry.REGEX);
    private static final Set<String> TARGETS = Set.of(BlockEntry.CLIENT_ID, BlockEntry.USERNAME, BlockEntry.IP);
    private static final String COLUMNS = "id, type, value, target, expires_at, created_at";

    private final DataSource dataSource;

    public BlockedClients(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * @param target for {@code regex} the field it matches, else null
     * @throws ConflictException if the same type, value and target are already blocked
     */
    public BlockEntry create(String type, String value, String target, Instant expiresAt) {
        check(type, value, target);
        String sql = "INSERT INTO blocked_client (type, value, target, expires_at) VALUES (?, ?, ?, ?) RETURNING "
                + COLUMNS;
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setString(1, type);
            st.setString(2, value);
            st.setString(3, target);
            Jdbc.setInstant(st, 4, expiresAt);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return read(rs);
            }
        } catch (SQLException e) {
            if (Jdbc.isUniqueViolation(e)) {
                throw new ConflictException(CONFLICT);
            }
            throw Jdbc.failure("block a client", e);
        }
    }

    public Optional<BlockEntry> get(String id) {
        Optional<UUID> uuid = Jdbc.uuid(id);
        if (uuid.isEmpty()) {
            return Optional.empty();
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("SELECT " + COLUMNS + " FROM blocked_client WHERE id = ?")) {
            st.setObject(1, uuid.get());
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        } catch (SQLException e) {
            throw Jdbc.failure("read a blocked client", e);
        }
    }

    /** Newest first; {@code type} null lists all types. Expired entries are listed too (with their time). */
    public Page<BlockEntry> list(String type, int page, int pageSize) {
        Jdbc.checkPage(page, pageSize);
        Conditions where = new Conditions().equal("type", type);
        return Jdbc.page(dataSource, "blocked_client", COLUMNS, where, "created_at DESC, id DESC", page, pageSize,
                BlockedClients::read, "list blocked clients");
    }

    public boolean delete(String id) {
        Optional<UUID> uuid = Jdbc.uuid(id);
        if (uuid.isEmpty()) {
            return false;
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("DELETE FROM blocked_client WHERE id = ?")) {
            st.setObject(1, uuid.get());
            return st.executeUpdate() > 0;
        } catch (SQLException e) {
            throw Jdbc.failure("unblock a client", e);
        }
    }

    /** Every entry not expired at {@code now}: what nodes match CONNECTs against. */
    public List<BlockEntry> active(Instant now) {
        Objects.requireNonNull(now, "now");
        String sql = "SELECT " + COLUMNS + " FROM blocked_client WHERE expires_at IS NULL OR expires_at > ? "
                + "ORDER BY created_at, id";
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            Jdbc.setInstant(st, 1, now);
            List<BlockEntry> entries = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    entries.add(read(rs));
                }
            }
            return entries;
        } catch (SQLException e) {
            throw Jdbc.failure("read the active blocks", e);
        }
    }

    private static void check(String type, String value, String target) {
        if (type == null || !TYPES.contains(type)) {
            throw new IllegalArgumentException("type must be one of client_id, username, ip, regex");
        }
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("value must not be empty");
        }
        if (type.equals(BlockEntry.REGEX)) {
            if (target == null || !TARGETS.contains(target)) {
                throw new IllegalArgumentException("target must be client_id, username or ip for a regex block");
            }
        } else if (target != null) {
            throw new IllegalArgumentException("target is only for a regex block");
        }
    }

    private static BlockEntry read(ResultSet rs) throws SQLException {
        return new BlockEntry(rs.getString("id"), rs.getString("type"), rs.getString("value"), rs.getString("target"),
                Jdbc.instant(rs, "expires_at"), Jdbc.instant(rs, "created_at"));
    }
}
