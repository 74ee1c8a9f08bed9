package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.security.TopicRules;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompiledRulesTest {

    private final CompiledRules compiled = new CompiledRules();

    @Test
    void equalListsShareOneCompiledInstance() {
        TopicRules first = compiled.of(new ArrayList<>(List.of("devices/${clientid}/#", "!devices/x/secret")));
        TopicRules second = compiled.of(List.of(new String("devices/${clientid}/#"), new String("!devices/x/secret")));
        assertSame(first, second);
        assertTrue(first.allowsPublish("devices/d1/t", "d1", null, null));
        assertFalse(first.allowsPublish("devices/d2/t", "d1", null, null), "the placeholder is the client's own ID");
        assertNotSame(first, compiled.of(List.of("devices/#")));
    }

    @Test
    void aListChangedAfterwardsDoesNotChangeWhatWasCached() {
        List<String> filters = new ArrayList<>(List.of("a/#"));
        TopicRules a = compiled.of(filters);
        filters.set(0, "b/#");
        TopicRules b = compiled.of(filters);
        assertNotSame(a, b);
        assertTrue(b.allowsPublish("b/1", "c", null, null));
        assertFalse(b.allowsPublish("a/1", "c", null, null));
        assertSame(a, compiled.of(List.of("a/#")));
    }

    @Test
    void anInvalidListFailsEveryTimeAndIsNotKept() {
        assertThrows(IllegalArgumentException.class, () -> compiled.of(List.of("a/#/b")));
        assertThrows(IllegalArgumentException.class, () -> compiled.of(List.of("a/#/b")));
        assertEquals(0, compiled.size());
    }

    @Test
    void theCacheIsBounded() {
        for (int i = 0; i <= CompiledRules.MAX_ENTRIES; i++) {
            compiled.of(List.of("t/" + i));
        }
        assertTrue(compiled.size() <= CompiledRules.MAX_ENTRIES, "size " + compiled.size());
    }
}
