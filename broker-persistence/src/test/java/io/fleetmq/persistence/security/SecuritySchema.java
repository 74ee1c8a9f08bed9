package io.fleetmq.persistence.security;

import io.fleetmq.persistence.sql.Database;
import io.fleetmq.persistence.sql.DatabaseSettings;
import io.fleetmq.testkit.TestServices;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * A schema of its own in the shared test PostgreSQL, migrated by {@link Database#open} like a node's, and
 * dropped on close: each test starts from empty tables whatever ran before or beside it.
 */
final class SecuritySchema implements AutoCloseable {

    private final TestServices services = TestServices.shared();
    private final String name = "sec_" + UUID.randomUUID().toString().replace("-", "");
    private final Database database;

    SecuritySchema() {
        this(4);
    }

    SecuritySchema(int poolSize) {
        execute("CREATE SCHEMA " + name);
        String url = services.databaseUrl();
        url += (url.contains("?") ? "&" : "?") + "currentSchema=" + name;
        database = Database.open(new DatabaseSettings(url, services.databaseUser(), services.databasePassword(),
                poolSize, Duration.ofSeconds(10)));
    }

    DataSource dataSource() {
        return database.dataSource();
    }

    /** Runs a statement on this schema's tables, for what the stores do not expose. */
    void sql(String statement) {
        try (Connection c = database.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(statement);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The first column of the first row, as text, or null if there is no row. */
    String queryString(String query) {
        try (Connection c = database.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(query)) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        database.close();
        execute("DROP SCHEMA " + name + " CASCADE");
    }

    private void execute(String statement) {
        try (Connection c = DriverManager.getConnection(services.databaseUrl(), services.databaseUser(),
                services.databasePassword());
             Statement st = c.createStatement()) {
            st.execute(statement);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot " + statement + ": " + e.getMessage(), e);
        }
    }
}
