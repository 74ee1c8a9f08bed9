package io.fleetmq.core.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** When the connect sequence's answer has the node delete the client ID's store in Redis. */
class ConnectAcceptedTest {

    private static SessionState before(boolean queuing) {
        return new SessionState("dev-1", "node-1", 1, 3, true, queuing ? 300 : 0, 0, null, "r0", "DEVICE", queuing);
    }

    private static boolean clears(SessionState before, boolean present, boolean queuing) {
        return NodeCommand.ConnectAccepted.decided("r", "dev-1", 4, before, present, queuing).clearStore();
    }

    @Test
    void sessionsThatNeverPersistLeaveRedisAlone() {
        assertEquals(false, clears(null, false, false), "no session before, none persisting now");
        assertEquals(false, clears(before(false), false, false), "a clean start after one that did not persist");
        assertEquals(false, clears(before(false), true, false), "one that did not persist goes on");
    }

    @Test
    void aPersistentSessionStartsWithoutWhatAnEarlierOneLeft() {
        assertEquals(true, clears(null, false, true));
        assertEquals(true, clears(before(false), false, true));
        assertEquals(true, clears(before(true), false, true), "a clean start ends the persistent session before");
        assertEquals(true, clears(before(false), true, true), "one that did not persist goes on persisting");
    }

    @Test
    void theStoreOfAPersistentSessionGoesWithItAndStaysWhileItGoesOn() {
        assertEquals(true, clears(before(true), false, false), "ended by a clean start that does not persist");
        assertEquals(false, clears(before(true), true, true), "resumed: the store is the session's");
    }
}
