package io.fleetmq.persistence.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.Page;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the embedded PostgreSQL of the test kit, in a schema of its own per test. */
class BlockedClientsTest {

    private static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");

    private SecuritySchema schema;
    private BlockedClients blocked;

    @BeforeEach
    void open() {
        schema = new SecuritySchema();
        blocked = new BlockedClients(schema.dataSource());
    }

    @AfterEach
    void close() {
        schema.close();
    }

    private static List<String> values(List<BlockEntry> entries) {
        return entries.stream().map(BlockEntry::value).toList();
    }

    @Test
    void createsReadsAndDeletesABlock() {
        Instant expires = NOW.plus(1, ChronoUnit.HOURS).plusNanos(123_456_000);
        BlockEntry entry = blocked.create(BlockEntry.CLIENT_ID, "dev-1", null, expires);
        assertNotNull(UUID.fromString(entry.id()));
        assertEquals(BlockEntry.CLIENT_ID, entry.type());
        assertEquals("dev-1", entry.value());
        assertNull(entry.target());
        assertEquals(expires, entry.expiresAt());
        assertNotNull(entry.createdAt());
        assertEquals(entry, blocked.get(entry.id()).orElseThrow());

        BlockEntry regex = blocked.create(BlockEntry.REGEX, "bad-.*", BlockEntry.USERNAME, null);
        assertEquals(BlockEntry.USERNAME, blocked.get(regex.id()).orElseThrow().target());
        assertNull(regex.expiresAt());

        assertTrue(blocked.delete(entry.id()));
        assertFalse(blocked.delete(entry.id()));
        assertTrue(blocked.get(entry.id()).isEmpty());
    }

    @Test
    void malformedAndUnknownIdsAreNotFound() {
        blocked.create(BlockEntry.IP, "10.0.0.0/8", null, null);
        for (String id : List.of("x", "", "1-2-3-4-5", UUID.randomUUID().toString())) {
            assertTrue(blocked.get(id).isEmpty(), id);
            assertFalse(blocked.delete(id), id);
        }
        assertEquals(1, blocked.list(null, 0, 10).total());
    }

    @Test
    void theSameBlockTwiceConflicts() {
        blocked.create(BlockEntry.CLIENT_ID, "dev-1", null, null);
        blocked.create(BlockEntry.REGEX, "dev-.*", BlockEntry.CLIENT_ID, null);
        // Same value under another type or target is another block.
        blocked.create(BlockEntry.USERNAME, "dev-1", null, null);
        blocked.create(BlockEntry.REGEX, "dev-.*", BlockEntry.USERNAME, null);

        ConflictException plain = assertThrows(ConflictException.class,
                () -> blocked.create(BlockEntry.CLIENT_ID, "dev-1", null, NOW));
        assertEquals("this type, value and target are already blocked", plain.getMessage());
        assertThrows(ConflictException.class,
                () -> blocked.create(BlockEntry.REGEX, "dev-.*", BlockEntry.CLIENT_ID, null));
        assertEquals(4, blocked.list(null, 0, 10).total());
    }

    @Test
    void badInputNamesTheField() {
        IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
                () -> blocked.create("mac", "x", null, null));
        assertTrue(type.getMessage().startsWith("type"), type.getMessage());
        IllegalArgumentException value = assertThrows(IllegalArgumentException.class,
                () -> blocked.create(BlockEntry.IP, "", null, null));
        assertTrue(value.getMessage().startsWith("value"), value.getMessage());
        IllegalArgumentException target = assertThrows(IllegalArgumentException.class,
                () -> blocked.create(BlockEntry.REGEX, ".*", null, null));
        assertTrue(target.getMessage().startsWith("target"), target.getMessage());
        assertThrows(IllegalArgumentException.class, () -> blocked.create(BlockEntry.IP, "1.2.3.4", BlockEntry.IP, null));
        assertEquals(0, blocked.list(null, 0, 10).total());
    }

    @Test
    void listsNewestFirstByTypeWithPages() {
        blocked.create(BlockEntry.CLIENT_ID, "a", null, null);
        blocked.create(BlockEntry.IP, "b", null, null);
        blocked.create(BlockEntry.CLIENT_ID, "c", null, NOW.minusSeconds(60));
        blocked.create(BlockEntry.CLIENT_ID, "d", null, null);

        Page<BlockEntry> all = blocked.list(null, 0, 10);
        assertEquals(4, all.total());
        assertEquals(List.of("d", "c", "b", "a"), values(all.items()));

        Page<BlockEntry> clientIds = blocked.list(BlockEntry.CLIENT_ID, 1, 2);
        assertEquals(3, clientIds.total());
        assertEquals(List.of("a"), values(clientIds.items()));
        assertEquals(List.of("d", "c"), values(blocked.list(BlockEntry.CLIENT_ID, 0, 2).items()));
        assertEquals(0, blocked.list(BlockEntry.USERNAME, 0, 2).total());
        assertThrows(IllegalArgumentException.class, () -> blocked.list(null, 0, -5));
    }

    @Test
    void activeLeavesOutExpiredBlocks() {
        blocked.create(BlockEntry.CLIENT_ID, "forever", null, null);
        blocked.create(BlockEntry.CLIENT_ID, "later", null, NOW.plusSeconds(60));
        blocked.create(BlockEntry.CLIENT_ID, "past", null, NOW.minusSeconds(60));
        blocked.create(BlockEntry.CLIENT_ID, "now", null, NOW);

        assertEquals(List.of("forever", "later"), values(blocked.active(NOW)));
        assertEquals(List.of("forever", "later", "past", "now"), values(blocked.active(NOW.minusSeconds(61))));
        assertEquals(List.of("forever"), values(blocked.active(NOW.plusSeconds(60))));
        for (BlockEntry entry : blocked.active(NOW)) {
            assertFalse(entry.expired(NOW), entry.toString());
        }
    }
}
