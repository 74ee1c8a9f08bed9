package io.fleetmq.app.support;

import io.fleetmq.persistence.sql.Database;
import io.fleetmq.persistence.sql.DatabaseSettings;
import io.fleetmq.testkit.TestServices;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

/**
 * A schema of its own in the test kit's PostgreSQL, for tests whose credentials and blocked
 * clients must not reach the nodes of other tests (which share the kit's default database).
 */
public final class PrivateDatabase implements AutoCloseable {

    private final String url;
    private final Database database;

    private PrivateDatabase(String url, Database database) {
        this.url = url;
        this.database = database;
    }

    public static PrivateDatabase create() {
        TestServices s = TestServices.shared();
        String url = schema("t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16), false);
        Database db = Database.open(new DatabaseSettings(url, s.databaseUser(), s.databasePassword(), 4,
                Duration.ofSeconds(5)));
        return new PrivateDatabase(url, db);
    }

    /** Creates schema {@code name} (unless it is there and {@code reuse}) and returns a URL that uses it. */
    private static String schema(String name, boolean reuse) {
        TestServices s = TestServices.shared();
        try (Connection c = DriverManager.getConnection(s.databaseUrl(), s.databaseUser(), s.databasePassword());
                Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA " + (reuse ? "IF NOT EXISTS " : "") + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create test schema " + name, e);
        }
        String base = s.databaseUrl();
        return base + (base.contains("?") ? "&" : "?") + "currentSchema=" + name;
    }

    /**
     * The environment that points a node at a schema named after {@code dataDir}, created if it is
     * not there yet: a node started again on the same data directory finds its tables as it left them.
     */
    public static Map<String, String> envFor(java.nio.file.Path dataDir) {
        TestServices s = TestServices.shared();
        String name = "n_" + UUID.nameUUIDFromBytes(dataDir.toAbsolutePath().normalize().toString()
                .getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString().replace("-", "").substring(0, 16);
        return Map.of("DATABASE_URL", schema(name, true), "DATABASE_USER", s.databaseUser(),
                "DATABASE_PASSWORD", s.databasePassword());
    }

    public String url() {
        return url;
    }

    public Database database() {
        return database;
    }

    /** The environment that points a node at this database. */
    public Map<String, String> env() {
        TestServices s = TestServices.shared();
        return Map.of("DATABASE_URL", url, "DATABASE_USER", s.databaseUser(), "DATABASE_PASSWORD", s.databasePassword());
    }

    @Override
    public void close() {
        database.close();
    }
}
