package io.fleetmq.persistence.security;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Settings changed through the admin API, which override the configuration file and environment of
 * every node (table {@code broker_setting}: the setting's dotted key, its value as a JSON string).
 * A missing row means "as configured".
 */
public final class RuntimeSettings {

    private final DataSource dataSource;

    public RuntimeSettings(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** Every stored setting whose key starts with {@code prefix}, by key. */
    public Map<String, String> all(String prefix) {
        String sql = "SELECT name, value #>> '{}' AS text FROM broker_setting WHERE starts_with(name, ?)";
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setString(1, prefix);
            Map<String, String> out = new TreeMap<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString("name"), rs.getString("text"));
                }
            }
            return out;
        } catch (SQLException e) {
            throw Jdbc.failure("read runtime settings", e);
        }
    }

    /**
     * Makes the stored settings under {@code prefix} exactly {@code values}, in one transaction: keys
     * not in it go back to their configured value.
     *
     * @throws IllegalArgumentException if a key does not start with {@code prefix}
     */
    public void replace(String prefix, Map<String, String> values) {
        for (String key : values.keySet()) {
            if (!key.startsWith(prefix)) {
                throw new IllegalArgumentException(key + " is not a setting under " + prefix);
            }
        }
        try (Connection c = dataSource.getConnection()) {
            Jdbc.inTransaction(c, tx -> {
                try (PreparedStatement st = tx.prepareStatement("DELETE FROM broker_setting WHERE starts_with(name, ?)")) {
                    st.setString(1, prefix);
                    st.executeUpdate();
                }
                try (PreparedStatement st = tx.prepareStatement(
                        "INSERT INTO broker_setting (name, value, updated_at) VALUES (?, to_jsonb(?::text), now())")) {
                    for (Map.Entry<String, String> e : values.entrySet()) {
                        st.setString(1, e.getKey());
                        st.setString(2, Objects.requireNonNull(e.getValue(), e.getKey()));
                        st.addBatch();
                    }
                    st.executeBatch();
                }
                return null;
            });
        } catch (SQLException e) {
            throw Jdbc.failure("store runtime settings", e);
        }
    }
}
