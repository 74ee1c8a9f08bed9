package io.fleetmq.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.persistence.sql.Database;
import io.fleetmq.persistence.sql.DatabaseSettings;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TestServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Against the embedded PostgreSQL of the test kit. */
class DatabaseTest {

    private static DatabaseSettings settings() {
        TestServices s = TestServices.shared();
        return new DatabaseSettings(s.databaseUrl(), s.databaseUser(), s.databasePassword(), 2, Duration.ofSeconds(5));
    }

    @Test
    void migratesTheSchemaAndIsHealthy() throws Exception {
        try (Database db = Database.open(settings());
             Connection c = db.dataSource().getConnection();
             Statement st = c.createStatement()) {
            st.executeUpdate("INSERT INTO broker_setting (name, value) VALUES ('test.migrated', '42'::jsonb) "
                    + "ON CONFLICT (name) DO UPDATE SET value = excluded.value");
            try (ResultSet rs = st.executeQuery("SELECT value::text FROM broker_setting WHERE name = 'test.migrated'")) {
                assertTrue(rs.next());
                assertEquals("42", rs.getString(1));
            }
            assertTrue(db.healthCheck().check().up());
        }
    }

    @Test
    void openingTwiceDoesNotReapplyMigrations() {
        try (Database first = Database.open(settings())) {
            assertTrue(first.healthCheck().check().up());
        }
        try (Database second = Database.open(settings())) {
            assertTrue(second.healthCheck().check().up());
        }
    }

    @Test
    void unreachableDatabaseIsAOneLineError() {
        DatabaseSettings nowhere = new DatabaseSettings("jdbc:postgresql://127.0.0.1:" + FreePorts.next() + "/x",
                "u", "p", 1, Duration.ofSeconds(2));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Database.open(nowhere));
        assertTrue(e.getMessage().startsWith("cannot connect to PostgreSQL at jdbc:postgresql://127.0.0.1:"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void healthCheckGoesDownWhenThePoolIsClosed() {
        Database db = Database.open(settings());
        db.close();
        assertFalse(db.healthCheck().check().up());
    }
}
