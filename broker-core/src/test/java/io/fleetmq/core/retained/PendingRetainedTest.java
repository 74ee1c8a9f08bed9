package io.fleetmq.core.retained;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Changes a node acknowledged before the retained log delivers them. */
class PendingRetainedTest {

    private final AtomicLong now = new AtomicLong();
    private final RetainedIndex<String> index = new RetainedIndex<>(String::length, Duration.ofSeconds(60), now::get);

    private static LogPosition at(int partition, long offset) {
        return new LogPosition(partition, offset);
    }

    @Test
    @DisplayName("an acknowledged change is seen at once, by topic and by filter, and stays when older records arrive")
    void acknowledgedChangeWinsOverOlderRecords() {
        index.applied("a/b", "old", at(1, 5));
        index.acknowledged("a/b", "new", at(2, 7));
        assertEquals("new", index.get("a/b"));
        assertEquals(List.of("new"), index.match("a/+"));
        assertEquals(true, index.isPending("a/b"));
        assertEquals(false, index.isPending("a"), "only the topic of the change");
        // A record of another publisher written to the log before ours: older, does not hide ours.
        index.applied("a/b", "other", at(3, 1));
        assertEquals(List.of("new"), index.match("a/#"));
        assertEquals(true, index.isPending("a/b"), "ours is still on its way");
        assertEquals(1, index.size());
        // Ours arrives: the log's state is it, nothing pending any more.
        index.applied("a/b", "new", at(2, 7));
        assertEquals(false, index.hasPending());
        assertEquals(false, index.isPending("a/b"));
        assertEquals(List.of("new"), index.match("#"));
        assertEquals(3, index.bytes());
    }

    @Test
    @DisplayName("a later record of the same publish partition replaces the pending change")
    void laterRecordOfTheSamePartitionEndsIt() {
        index.acknowledged("t", "mine", at(4, 10));
        index.applied("t", "later", at(4, 11));
        assertEquals("later", index.get("t"));
        assertEquals(false, index.hasPending());
    }

    @Test
    @DisplayName("[MQTT-3.3.1-6] a deletion is pending too; an undelivered change is forgotten after its lifetime")
    void deletionsArePendingAndChangesExpire() {
        index.applied("t", "kept", at(0, 1));
        index.acknowledged("t", null, at(0, 2));
        assertNull(index.get("t"));
        assertEquals(List.of(), index.match("#"));
        now.addAndGet(Duration.ofSeconds(61).toNanos());
        assertEquals("kept", index.get("t"), "the log never delivered the deletion");
        index.acknowledged("u", "x", at(0, 3));
        index.acknowledged("u", "y", at(1, 3));
        assertEquals("y", index.get("u"), "the last acknowledged is shown");
        index.applied("u", "y", at(1, 3));
        assertEquals("x", index.get("u"), "x is still to come from the log, after y");
        index.applied("u", "x", at(0, 3));
        assertEquals("x", index.get("u"));
        assertEquals(false, index.hasPending());
    }
}
