package io.fleetmq.session.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fleetmq.core.cluster.SessionState;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The directory counts the persistent APPLICATION sessions, which each have a Kafka topic. */
class SessionDirectoryTest {

    private static SessionState state(String clientId, long expiry, String type) {
        return new SessionState(clientId, "node-1", 1, 1, true, expiry, 0, null, "r-" + clientId, type, expiry > 0);
    }

    @Test
    void countsPersistentApplicationSessionsOnly() {
        SessionDirectory d = new SessionDirectory();
        d.applied("app-1", state("app-1", 60, ClientTypes.APPLICATION), 1);
        d.applied("app-2", state("app-2", 0, ClientTypes.APPLICATION), 2);
        d.applied("dev-1", state("dev-1", 60, ClientTypes.DEVICE), 3);
        d.applied("app-3", state("app-3", 60, ClientTypes.APPLICATION), 4);
        assertEquals(2, d.applicationSessions());
        assertEquals(Set.of("app-1", "app-3"), d.applicationClients());

        d.applied("app-1", state("app-1", 60, ClientTypes.APPLICATION), 5); // the same session again
        d.applied("app-3", state("app-3", 0, ClientTypes.APPLICATION), 6);  // no longer persistent
        d.applied("app-2", state("app-2", 30, ClientTypes.APPLICATION), 7); // now persistent
        assertEquals(Set.of("app-1", "app-2"), d.applicationClients());
        d.applied("app-1", null, 8);
        assertEquals(1, d.applicationSessions());
    }

    @Test
    void listsSessionsInClientIdOrderWithPendingWritesApplied() {
        SessionDirectory d = new SessionDirectory();
        for (String id : new String[] {"c", "a/1", "e", "b"}) {
            d.applied(id, state(id, 0, ClientTypes.DEVICE), 1);
        }
        d.written("d", state("d", 0, ClientTypes.DEVICE));  // not yet back from Kafka
        d.written("e", null);                               // deleted, not yet back
        d.written("b", state("b", 60, ClientTypes.DEVICE)); // changed, not yet back
        assertEquals(java.util.List.of("a/1", "b", "c", "d"),
                d.ordered("").map(SessionState::clientId).toList());
        assertEquals(java.util.List.of("c", "d"), d.ordered("bb").map(SessionState::clientId).toList());
        assertEquals(60, d.ordered("b").findFirst().orElseThrow().sessionExpirySeconds());

        d.applied("e", null, 2);
        d.applied("a/1", null, 3);
        assertEquals(java.util.List.of("b", "c", "d"), d.ordered("").map(SessionState::clientId).toList());
    }

    @Test
    void remembersWhichEventDecidedASessionThroughPendingWritesTheTopicAndDeletes() {
        SessionDirectory d = new SessionDirectory();
        assertEquals(SessionState.UNKNOWN, d.decidedAt("c"));

        SessionDirectory.Pending written = d.written("c", state("c", 60, ClientTypes.DEVICE).withDecidedAt(7));
        assertEquals(7, d.decidedAt("c"), "a pending write counts at once");
        d.stored(written, 100);
        d.applied("c", state("c", 60, ClientTypes.DEVICE), 100, 7);
        assertEquals(7, d.decidedAt("c"), "from the record's header once back from Kafka");
        assertEquals(7, d.get("c").orElseThrow().decidedAt());

        SessionDirectory.Pending deleted = d.deleted("c", 9);
        assertEquals(9, d.decidedAt("c"), "a pending delete counts at once");
        d.stored(deleted, 101);
        d.applied("c", null, 101, 9);
        assertEquals(java.util.Optional.empty(), d.get("c"));
        assertEquals(9, d.decidedAt("c"), "a deleted session's last event is remembered");

        d.applied("c", state("c", 0, ClientTypes.DEVICE), 102, 12);
        assertEquals(12, d.decidedAt("c"));
        d.applied("c", null, 103, SessionState.UNKNOWN); // a tombstone of a node that does not say
        assertEquals(SessionState.UNKNOWN, d.decidedAt("c"));
    }

    @Test
    void aFailedWriteFallsBackToWhatTheTopicHoldsUnlessALaterWriteReplacedIt() {
        SessionDirectory d = new SessionDirectory();
        d.applied("c", state("c", 60, ClientTypes.DEVICE), 1, 4);

        SessionDirectory.Pending lost = d.written("c", state("c", 0, ClientTypes.DEVICE).withDecidedAt(5));
        d.failed("c", lost);
        assertEquals(4, d.decidedAt("c"), "decided again from the stored record");
        assertEquals(60, d.get("c").orElseThrow().sessionExpirySeconds());

        SessionDirectory.Pending first = d.written("c", state("c", 0, ClientTypes.DEVICE).withDecidedAt(5));
        d.written("c", state("c", 30, ClientTypes.DEVICE).withDecidedAt(6));
        d.failed("c", first);
        assertEquals(6, d.decidedAt("c"), "the later write stands");
        assertEquals(30, d.get("c").orElseThrow().sessionExpirySeconds());
    }

    @Test
    void aStoredWriteLeavesThePendingViewOnceItsRecordOrALaterOneIsApplied() {
        SessionDirectory d = new SessionDirectory();
        SessionDirectory.Pending first = d.written("a", state("a", 60, ClientTypes.DEVICE).withDecidedAt(1));
        SessionDirectory.Pending other = d.written("b", state("b", 60, ClientTypes.DEVICE).withDecidedAt(2));
        d.stored(first, 10);
        SessionDirectory.Pending replacing = d.written("a", state("a", 30, ClientTypes.DEVICE).withDecidedAt(3));

        d.applied("b", state("b", 0, ClientTypes.DEVICE), 9, 0); // another node's earlier write of b
        assertEquals(60, d.get("b").orElseThrow().sessionExpirySeconds(), "b's own write is still ahead");
        d.applied("a", state("a", 60, ClientTypes.DEVICE), 10, 1);
        assertEquals(30, d.get("a").orElseThrow().sessionExpirySeconds(), "the write that replaced it stays pending");

        // b's record is read before Kafka's answer for it arrives: it settles with the next record.
        d.applied("b", state("b", 60, ClientTypes.DEVICE), 11, 2);
        d.stored(other, 11);
        d.stored(replacing, 12);
        d.applied("a", state("a", 30, ClientTypes.DEVICE), 12, 3);
        d.applied("b", state("b", 1, ClientTypes.DEVICE), 13, 5); // another node's write of b, after its own
        assertEquals(1, d.get("b").orElseThrow().sessionExpirySeconds(), "no pending write of b shadows the topic");
        d.applied("a", state("a", 7, ClientTypes.DEVICE), 14, 6);
        assertEquals(7, d.get("a").orElseThrow().sessionExpirySeconds(), "nor of a");
    }

    @Test
    void remembersABoundedNumberOfDeletes() {
        SessionDirectory d = new SessionDirectory();
        for (int i = 0; i <= SessionDirectory.RECENT_DELETES; i++) {
            d.applied("c" + i, null, i, i);
        }
        assertEquals(SessionState.UNKNOWN, d.decidedAt("c0"), "the oldest is forgotten");
        assertEquals(1, d.decidedAt("c1"));
        assertEquals(SessionDirectory.RECENT_DELETES, d.decidedAt("c" + SessionDirectory.RECENT_DELETES));
    }
}
