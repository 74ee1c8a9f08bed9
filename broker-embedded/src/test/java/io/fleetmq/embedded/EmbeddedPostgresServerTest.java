package io.fleetmq.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedPostgresServerTest {

    @TempDir
    Path dataDir;

    @Test
    void keepsRowsAcrossRestart() throws SQLException {
        EmbeddedPostgresServer server = new EmbeddedPostgresServer(dataDir, "127.0.0.1", 0);
        server.start();
        String password = server.password();
        try {
            assertEquals("jdbc:postgresql://127.0.0.1:" + server.port() + "/fleetmq", server.jdbcUrl());
            try (Connection connection = DriverManager.getConnection(server.jdbcUrl(), server.user(), password);
                 Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE note (id integer PRIMARY KEY, body text NOT NULL)");
                statement.execute("INSERT INTO note VALUES (1, 'survives a restart')");
            }
        } finally {
            server.stop();
        }
        assertNull(server.jdbcUrl());

        EmbeddedPostgresServer restarted = new EmbeddedPostgresServer(dataDir, "127.0.0.1", 0);
        restarted.start();
        try {
            assertEquals(password, restarted.password());
            try (Connection connection = DriverManager.getConnection(restarted.jdbcUrl(), restarted.user(), password);
                 Statement statement = connection.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT body FROM note WHERE id = 1")) {
                rows.next();
                assertEquals("survives a restart", rows.getString(1));
                assertFalse(rows.next());
            }
            SQLException rejected = assertThrows(SQLException.class,
                    () -> DriverManager.getConnection(restarted.jdbcUrl(), restarted.user(), "not-the-password").close());
            assertEquals("28P01", rejected.getSQLState(), "password authentication is enforced");
        } finally {
            restarted.stop();
        }
    }
}
