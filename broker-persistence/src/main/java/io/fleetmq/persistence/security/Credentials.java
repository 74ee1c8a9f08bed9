package io.fleetmq.persistence.security;

import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.Page;
import io.fleetmq.core.security.scram.ScramAlgorithm;
import io.fleetmq.core.security.scram.ScramKeys;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import javax.sql.DataSource;

/**
 * MQTT client credentials in PostgreSQL (table {@code credential}). At most one credential per
 * (user name, client ID) pair, where either may be absent; at most one {@code x509} credential per
 * certificate common name (exact or pattern). Every method throws a failure of PostgreSQL
 * as {@link DataAccessException}, and input it cannot store as {@link IllegalArgumentException} naming the field.
 */
public final class Credentials {

    /**
     * What a client of the API writes; {@code passwordHash} (basic) or {@code scram} (scram) null on
     * update keeps the stored one. {@code type} null means {@link Credential#BASIC}; null rule lists mean none.
     * An {@link Credential#X509} credential has {@code certCommonName} (a regular expression when
     * {@code certCommonNameRegex}) and no user name, client ID or password.
     */
    public record Input(String type, String username, String clientId, String passwordHash, String clientType,
            List<String> publish, List<String> subscribe, ScramKeys scram, String certCommonName,
            boolean certCommonNameRegex) {

        /** A credential without SCRAM keys or certificate name. */
        public Input(String type, String username, String clientId, String passwordHash, String clientType,
                List<String> publish, List<String> subscribe) {
            this(type, username, clientId, passwordHash, clientType, publish, subscribe, null, null, false);
        }

        /** A credential with SCRAM keys (or none) and no certificate name. */
        public Input(String type, String username, String clientId, String passwordHash, String clientType,
                List<String> publish, List<String> subscribe, ScramKeys scram) {
            this(type, username, clientId, passwordHash, clientType, publish, subscribe, scram, null, false);
        }

        /** An {@code x509} credential: a certificate name, no SCRAM keys. */
        public Input(String type, String username, String clientId, String passwordHash, String clientType,
                List<String> publish, List<String> subscribe, String certCommonName, boolean certCommonNameRegex) {
            this(type, username, clientId, passwordHash, clientType, publish, subscribe, null, certCommonName,
                    certCommonNameRegex);
        }

        boolean isScram() {
            return Credential.SCRAM.equals(type);
        }

        boolean x509() {
            return Credential.X509.equals(type);
        }
    }

    /** Filters of a listing; null fields do not filter. {@code text} matches user name or client ID, part of them. */
    public record Filter(String username, String clientId, String clientType, String text) {
        public static final Filter NONE = new Filter(null, null, null, null);
    }

    static final String CONFLICT = "a credential with this username and clientId exists";
    static final String X509_CONFLICT = "an x509 credential with this certCommonName exists";

    private static final String COLUMNS = "id, type, username, client_id, password_hash, client_type, publish, subscribe, "
            + "created_at, updated_at, algorithm, salt, stored_key, server_key, iterations, cert_common_name, "
            + "cert_common_name_regex";

    private final DataSource dataSource;

    public Credentials(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * @throws ConflictException if a credential with the same user name and client ID exists (for
     *                           {@code x509}: the same common name)
     */
    public Credential create(Input input) {
        check(input);
        if (input.isScram() && input.scram() == null) {
            throw new IllegalArgumentException("a scram credential needs its SCRAM keys");
        }
        String sql = "INSERT INTO credential (type, username, client_id, password_hash, client_type, publish, subscribe, "
                + "cert_common_name, cert_common_name_regex, algorithm, salt, stored_key, server_key, iterations) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + COLUMNS;
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            bindFields(c, st, input);
            bindScram(st, 10, input.isScram() ? input.scram() : null);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return read(rs);
            }
        } catch (SQLException e) {
            throw translate("create a credential", input, e);
        }
    }

    public Optional<Credential> get(String id) {
        Optional<UUID> uuid = Jdbc.uuid(id);
        if (uuid.isEmpty()) {
            return Optional.empty();
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("SELECT " + COLUMNS + " FROM credential WHERE id = ?")) {
            st.setObject(1, uuid.get());
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        } catch (SQLException e) {
            throw Jdbc.failure("read a credential", e);
        }
    }

    /** Ordered by user name, then client ID. */
    public Page<Credential> list(Filter filter, int page, int pageSize) {
        Jdbc.checkPage(page, pageSize);
        Filter f = filter == null ? Filter.NONE : filter;
        Conditions where = new Conditions()
                .equal("username", f.username())
                .equal("client_id", f.clientId())
                .equal("client_type", f.clientType())
                .contains(f.text(), "username", "client_id", "cert_common_name");
        return Jdbc.page(dataSource, "credential", COLUMNS, where, "username NULLS LAST, client_id NULLS LAST, id", page, pageSize,
                Credentials::read, "list credentials");
    }

    /**
     * Replaces the credential's fields (a null {@code passwordHash}, or for scram null SCRAM keys, keeps
     * its password). A credential that is not of type scram keeps no SCRAM keys, one of type scram or
     * x509 no hash.
     *
     * @return the new state, empty if there is no such credential
     * @throws ConflictException if another credential has the new user name and client ID
     */
    public Optional<Credential> update(String id, Input input) {
        check(input);
        Optional<UUID> uuid = Jdbc.uuid(id);
        if (uuid.isEmpty()) {
            return Optional.empty();
        }
        boolean keepScram = input.isScram() && input.scram() == null;
        String sql = "UPDATE credential SET type = ?, username = ?, client_id = ?, "
                + (input.isScram() || input.x509() ? "password_hash = ?, " : "password_hash = coalesce(?, password_hash), ")
                + "client_type = ?, publish = ?, subscribe = ?, cert_common_name = ?, cert_common_name_regex = ?, "
                + (keepScram ? "" : "algorithm = ?, salt = ?, stored_key = ?, server_key = ?, iterations = ?, ")
                + "updated_at = now() WHERE id = ? RETURNING " + COLUMNS;
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            bindFields(c, st, input);
            int next = 10;
            if (!keepScram) {
                bindScram(st, next, input.isScram() ? input.scram() : null);
                next += 5;
            }
            st.setObject(next, uuid.get());
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        } catch (SQLException e) {
            throw translate("update a credential", input, e);
        }
    }

    /** @return false if there was no such credential */
    public boolean delete(String id) {
        Optional<UUID> uuid = Jdbc.uuid(id);
        if (uuid.isEmpty()) {
            return false;
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("DELETE FROM credential WHERE id = ?")) {
            st.setObject(1, uuid.get());
            return st.executeUpdate() > 0;
        } catch (SQLException e) {
            throw Jdbc.failure("delete a credential", e);
        }
    }

    /**
     * The credentials that may match a CONNECT: those naming both this user name and this client ID,
     * those naming only this user name, and those naming only this client ID, most specific first.
     * {@code username} may be null (then only client-ID credentials match).
     */
    public List<Credential> candidates(String username, String clientId) {
        // false sorts before true: both named, then user name only, then client ID only.
        String sql = "SELECT " + COLUMNS + " FROM credential WHERE type = 'basic' "
                + "AND ((username = ? AND (client_id = ? OR client_id IS NULL)) "
                + "OR (username IS NULL AND client_id = ?)) "
                + "ORDER BY username IS NULL, client_id IS NULL";
        return lookUp(sql, st -> {
            st.setString(1, username);
            st.setString(2, clientId);
            st.setString(3, clientId);
        });
    }

    /**
     * The {@code basic} credentials of user name {@code username}, whatever client ID they name, at
     * most {@code limit}: those naming a client ID first. A fleet sharing one user name is then one
     * read for all its client IDs (see {@link #anyWithoutUsername}).
     */
    public List<Credential> byUsername(String username, int limit) {
        String sql = "SELECT " + COLUMNS + " FROM credential WHERE type = 'basic' AND username = ? "
                + "ORDER BY client_id IS NULL LIMIT ?";
        return lookUp(sql, st -> {
            st.setString(1, username);
            st.setInt(2, limit);
        });
    }

    /**
     * {@link #byUsername} for many user names in one query: each user name's {@code basic}
     * credentials, at most {@code limit} of each, those naming a client ID first. A user name with
     * none is absent from the map.
     */
    public java.util.Map<String, List<Credential>> byUsernames(Collection<String> usernames, int limit) {
        String sql = "SELECT " + COLUMNS + " FROM (SELECT " + COLUMNS + ", row_number() OVER (PARTITION BY username "
                + "ORDER BY client_id IS NULL, id) AS n FROM credential WHERE type = 'basic' AND username = ANY (?)) "
                + "AS t WHERE n <= ? ORDER BY username, n";
        java.util.Map<String, List<Credential>> found = new java.util.HashMap<>();
        for (Credential credential : lookUp(sql, st -> {
            st.setArray(1, textArray(st.getConnection(), List.copyOf(usernames)));
            st.setInt(2, limit);
        })) {
            found.computeIfAbsent(credential.username(), k -> new ArrayList<>()).add(credential);
        }
        return found;
    }

    private interface Parameters {
        void set(PreparedStatement st) throws SQLException;
    }

    /** The credentials {@code sql} selects ({@link #COLUMNS}) with its parameters set by {@code parameters}. */
    private List<Credential> lookUp(String sql, Parameters parameters) {
        return lookUp("look up credentials", sql, parameters);
    }

    /** {@link #lookUp(String, Parameters)}, failing as {@code action}. */
    private List<Credential> lookUp(String action, String sql, Parameters parameters) {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            parameters.set(st);
            List<Credential> found = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    found.add(read(rs));
                }
            }
            return found;
        } catch (SQLException e) {
            throw Jdbc.failure(action, e);
        }
    }

    /** Whether any credential exists, of any type: an index probe, not a count. */
    public boolean any() {
        return exists("SELECT EXISTS (SELECT 1 FROM credential)");
    }

    /**
     * Whether a {@code basic} credential matches by client ID alone (no user name): while none does,
     * a user name's credentials ({@link #byUsername}) are all {@link #candidates} can find for it.
     */
    public boolean anyWithoutUsername() {
        return exists("SELECT EXISTS (SELECT 1 FROM credential WHERE type = 'basic' AND username IS NULL)");
    }

    private boolean exists(String sql) {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql);
             ResultSet rs = st.executeQuery()) {
            return rs.next() && rs.getBoolean(1);
        } catch (SQLException e) {
            throw Jdbc.failure("look up credentials", e);
        }
    }

    /**
     * The {@code x509} credentials that may match a certificate chain whose subject common names are
     * {@code commonNames}: those naming one of them exactly, and every pattern (the caller matches
     * those). Unordered.
     */
    public List<Credential> x509Candidates(Collection<String> commonNames) {
        String sql = "SELECT " + COLUMNS + " FROM credential WHERE type = '" + Credential.X509 + "' "
                + "AND (cert_common_name_regex OR cert_common_name = ANY (?))";
        return lookUp("look up x509 credentials", sql,
                st -> st.setArray(1, textArray(st.getConnection(), List.copyOf(commonNames))));
    }

    /** The SCRAM credential of {@code username}, for an exchange that the client started with that name. */
    public Optional<Credential> scram(String username) {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(
                "SELECT " + COLUMNS + " FROM credential WHERE type = 'scram' AND username = ? AND client_id IS NULL")) {
            st.setString(1, username);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        } catch (SQLException e) {
            throw Jdbc.failure("look up a SCRAM credential", e);
        }
    }

    private static void check(Input input) {
        if (input == null) {
            throw new IllegalArgumentException("credential is missing");
        }
        if (input.x509()) {
            checkX509(input);
        } else if (input.certCommonName() != null || input.certCommonNameRegex()) {
            throw new IllegalArgumentException("certCommonName is only for credentials of type x509");
        } else if (input.username() == null && input.clientId() == null) {
            throw new IllegalArgumentException("a credential needs a username, a clientId or both");
        }
        if (input.clientType() != null && !input.clientType().equals("DEVICE")
                && !input.clientType().equals("APPLICATION")) {
            throw new IllegalArgumentException("clientType must be DEVICE, APPLICATION or absent");
        }
        if (input.isScram() && (input.username() == null || input.clientId() != null)) {
            throw new IllegalArgumentException("a scram credential names a username and no clientId");
        }
        if (input.isScram() && input.passwordHash() != null) {
            throw new IllegalArgumentException("a scram credential has no passwordHash");
        }
        checkRules("publish", input.publish());
        checkRules("subscribe", input.subscribe());
    }

    private static void checkX509(Input input) {
        if (input.certCommonName() == null || input.certCommonName().isEmpty()) {
            throw new IllegalArgumentException("certCommonName is required for a credential of type x509");
        }
        if (input.certCommonNameRegex()) {
            try {
                Pattern.compile(input.certCommonName());
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("certCommonName is not a valid regular expression: "
                        + e.getDescription());
            }
        }
        if (input.passwordHash() != null) {
            throw new IllegalArgumentException("password is not allowed for a credential of type x509");
        }
        if (input.username() != null || input.clientId() != null) {
            throw new IllegalArgumentException((input.username() != null ? "username" : "clientId")
                    + " is not allowed for a credential of type x509");
        }
    }

    /** Binds the five SCRAM columns from {@code first} on; all null for credentials of other types. */
    private static void bindScram(PreparedStatement st, int first, ScramKeys keys) throws SQLException {
        st.setString(first, keys == null ? null : keys.algorithm().apiName());
        st.setBytes(first + 1, keys == null ? null : keys.salt());
        st.setBytes(first + 2, keys == null ? null : keys.storedKey());
        st.setBytes(first + 3, keys == null ? null : keys.serverKey());
        if (keys == null) {
            st.setNull(first + 4, java.sql.Types.INTEGER);
        } else {
            st.setInt(first + 4, keys.iterations());
        }
    }

    private static void checkRules(String field, List<String> rules) {
        if (rules != null && rules.stream().anyMatch(Objects::isNull)) {
            throw new IllegalArgumentException(field + " must not contain null");
        }
    }

    /** Binds parameters 1 to 9 in the column order of INSERT and UPDATE. */
    private static void bindFields(Connection c, PreparedStatement st, Input input) throws SQLException {
        st.setString(1, input.type() == null ? Credential.BASIC : input.type());
        st.setString(2, input.username());
        st.setString(3, input.clientId());
        st.setString(4, input.passwordHash());
        st.setString(5, input.clientType());
        st.setArray(6, textArray(c, input.publish()));
        st.setArray(7, textArray(c, input.subscribe()));
        st.setString(8, input.certCommonName());
        st.setBoolean(9, input.certCommonNameRegex());
    }

    private static Array textArray(Connection c, List<String> values) throws SQLException {
        return c.createArrayOf("text", values == null ? new String[0] : values.toArray(String[]::new));
    }

    private static RuntimeException translate(String action, Input input, SQLException e) {
        return Jdbc.isUniqueViolation(e) ? new ConflictException(input.x509() ? X509_CONFLICT : CONFLICT)
                : Jdbc.failure(action, e);
    }

    private static Credential read(ResultSet rs) throws SQLException {
        return new Credential(rs.getString("id"), rs.getString("type"), rs.getString("username"),
                rs.getString("client_id"), rs.getString("password_hash"), rs.getString("client_type"),
                strings(rs.getArray("publish")), strings(rs.getArray("subscribe")),
                Jdbc.instant(rs, "created_at"), Jdbc.instant(rs, "updated_at"), scramKeys(rs),
                rs.getString("cert_common_name"), rs.getBoolean("cert_common_name_regex"));
    }

    /** The stored SCRAM keys, or null for a credential without (or with an algorithm this node does not know). */
    private static ScramKeys scramKeys(ResultSet rs) throws SQLException {
        ScramAlgorithm algorithm = ScramAlgorithm.ofApiName(rs.getString("algorithm"));
        byte[] salt = rs.getBytes("salt");
        byte[] storedKey = rs.getBytes("stored_key");
        byte[] serverKey = rs.getBytes("server_key");
        int iterations = rs.getInt("iterations");
        if (algorithm == null || salt == null || storedKey == null || serverKey == null || iterations < 1) {
            return null;
        }
        return new ScramKeys(algorithm, salt, iterations, storedKey, serverKey);
    }

    private static List<String> strings(Array array) throws SQLException {
        if (array == null) {
            return List.of();
        }
        try {
            return Arrays.asList((String[]) array.getArray());
        } finally {
            array.free();
        }
    }
}
