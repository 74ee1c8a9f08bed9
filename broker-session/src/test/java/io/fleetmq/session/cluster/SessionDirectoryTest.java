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
}
