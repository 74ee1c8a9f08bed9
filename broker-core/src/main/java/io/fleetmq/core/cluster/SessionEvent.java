package io.fleetmq.core.cluster;

import java.util.Objects;

/**
 * A request to the connect sequence, written to {@code session.events} keyed by client ID so that
 * all events of one client ID are decided by one node, one at a time, in the order written.
 */
public sealed interface SessionEvent {

    /** The client ID the event is about (the record key); empty for node-wide events. */
    String clientId();

    /**
     * A client sent CONNECT to {@code nodeId}; the answer goes to that node's {@code node.<node>} topic.
     *
     * @param requestId            unique per CONNECT
     * @param sessionExpirySeconds the expiry the session will have
     * @param will                 the connection's will, null if none
     * @param client               the connection's details for the session state, null from older nodes
     */
    record Connect(String requestId, String clientId, String nodeId, long nodeIncarnation, boolean cleanStart,
                   long sessionExpirySeconds, SessionState.PendingWill will, String clientType,
                   SessionState.ClientInfo client)
            implements SessionEvent {
        public Connect {
            Objects.requireNonNull(requestId, "requestId");
            Objects.requireNonNull(clientId, "clientId");
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(clientType, "clientType");
        }

        /** A CONNECT without connection details, as older nodes sent it. */
        public Connect(String requestId, String clientId, String nodeId, long nodeIncarnation, boolean cleanStart,
                long sessionExpirySeconds, SessionState.PendingWill will, String clientType) {
            this(requestId, clientId, nodeId, nodeIncarnation, cleanStart, sessionExpirySeconds, will, clientType,
                    null);
        }
    }

    /**
     * The connection of {@code epoch} ended on its node.
     *
     * @param sessionExpirySeconds the expiry now in force (DISCONNECT may change it); 0 ends the session
     * @param will                 a will the node did not publish because it waits for its delay; null if
     *                             the will was published, discarded or there was none
     * @param atMillis             when the connection ended
     */
    record Disconnected(String clientId, long epoch, long sessionExpirySeconds, SessionState.PendingWill will,
                        long atMillis) implements SessionEvent {

        /**
         * {@link #sessionExpirySeconds} of a connection that never came up on its node (accepted by
         * the sequence after the node had refused or lost it): the session keeps the expiry the
         * sequence gave it with the acceptance, which only the sequence knows for sure. 0 there ends
         * it; anything else leaves it offline, its store and subscriptions kept.
         */
        public static final long KEEP_EXPIRY = -1;

        public Disconnected {
            Objects.requireNonNull(clientId, "clientId");
        }
    }

    /** The node holding the session of {@code epoch} published its delayed will. */
    record WillPublished(String clientId, long epoch) implements SessionEvent {
        public WillPublished {
            Objects.requireNonNull(clientId, "clientId");
        }
    }

    /** The offline session of {@code epoch} expired on the node holding it. */
    record Expired(String clientId, long epoch) implements SessionEvent {
        public Expired {
            Objects.requireNonNull(clientId, "clientId");
        }
    }

    /**
     * The node told to give up a connection for {@code epoch} (a {@link NodeCommand.TakeOver}) has
     * done so, or held none: what it wrote about the session before (a {@link Disconnected} of a
     * DISCONNECT that came first) is ahead of this in the client ID's partition, so the CONNECT that
     * waited for it is decided against what really happened.
     *
     * @param epoch the epoch of the takeover (the waiting CONNECT's), not of the connection given up
     */
    record Released(String clientId, long epoch) implements SessionEvent {
        public Released {
            Objects.requireNonNull(clientId, "clientId");
        }
    }
}
