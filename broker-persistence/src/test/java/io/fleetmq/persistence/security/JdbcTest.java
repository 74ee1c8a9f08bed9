package io.fleetmq.persistence.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Pure logic: ids and what a failure may say. */
class JdbcTest {

    @Test
    void onlyCanonicalUuidsAreIds() {
        UUID id = UUID.randomUUID();
        assertEquals(id, Jdbc.uuid(id.toString()).orElseThrow());
        assertEquals(id, Jdbc.uuid(id.toString().toUpperCase()).orElseThrow());
        assertTrue(Jdbc.uuid("1-2-3-4-5").isEmpty());
        assertTrue(Jdbc.uuid("nope").isEmpty());
        assertTrue(Jdbc.uuid("").isEmpty());
        assertTrue(Jdbc.uuid(null).isEmpty());
    }

    @Test
    void aRejectedStatementIsOneLineWithoutTheValuesItQuotes() {
        SQLException server = new SQLException("ERROR: new row for relation \"credential\" violates check constraint\n"
                + "  Detail: Failing row contains (x, basic, null, null, $2b$10$secret).", "23514");
        DataAccessException e = Jdbc.failure("create a credential", server);
        assertEquals("cannot create a credential: ERROR: new row for relation \"credential\" violates check constraint"
                + " [23514]", e.getMessage());
        assertFalse(e.getCause().getMessage().contains("secret"));
        assertFalse(e.getCause().toString().contains("secret"));
    }

    @Test
    void aFailedBatchReportsItsEntrysErrorNotTheStatement() {
        BatchUpdateException batch = new BatchUpdateException("Batch entry 0 INSERT INTO t VALUES ('alice') was aborted",
                "23505", new int[0]);
        batch.setNextException(new SQLException("ERROR: duplicate key value\n  Detail: Key (x)=(alice)", "23505"));
        DataAccessException e = Jdbc.failure("record", batch);
        assertEquals("cannot record: ERROR: duplicate key value [23505]", e.getMessage());
        assertFalse(e.getCause().toString().contains("alice"));
    }

    @Test
    void aConnectionFailureKeepsItsCause() {
        SQLException down = new SQLException("Connection refused", "08001");
        assertSame(down, Jdbc.failure("list credentials", down).getCause());
    }
}
