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
}
