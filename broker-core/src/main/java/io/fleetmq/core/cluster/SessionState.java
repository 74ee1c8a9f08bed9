package io.fleetmq.core.cluster;

import io.fleetmq.core.message.BrokerMessage;
import java.util.Objects;

/**
 * A session as the whole cluster knows it: one record per client ID in the compacted
 * {@code sessions} topic, written only by the node that sequences that client ID's connects.
 *
 * @param clientId              the client identifier
 * @param nodeId                the node holding the session (connected there, or last connected there)
 * @param nodeIncarnation       that node's incarnation when it took the session
 * @param epoch                 increases with every accepted CONNECT of this client ID; a command about
 *                              an older epoch is stale
 * @param connected             whether a network connection is attached now
 * @param sessionExpirySeconds  the session expiry interval in force (0xFFFFFFFF = never)
 * @param disconnectedAtMillis  when the last connection ended (0 while connected)
 * @param will                  the will not yet published: the connected client's, or a delayed one
 *                              waiting for its time; null if none
 * @param requestId             the CONNECT request that set {@link #epoch}, so a CONNECT seen twice is
 *                              answered the same way twice
 * @param clientType            DEVICE or APPLICATION
 * @param queuing               whether messages for the session go through its store (a DEVICE queue in
 *                              Redis, an APPLICATION backlog in Kafka) rather than straight to its
 *                              connection: its expiry interval is above 0, or was when the connection now
 *                              attached resumed it with expiry 0. The store belongs to the session until
 *                              the session ends; the expiry of the last CONNECT only decides when that is.
 * @param client                what an operator wants to know of the current or last connection (address,
 *                              user name, protocol, since when, keep alive); null in records written by
 *                              nodes that did not replicate it yet
 * @param decidedAt             the offset, in the client ID's {@code session.events} partition, of the last
 *                              event the connect sequence decided for this session; an event at or before
 *                              it was decided already (a batch read again). {@link #UNKNOWN} in records of
 *                              nodes that did not say. It travels in a header of the record, not in its value.
 */
public record SessionState(String clientId, String nodeId, long nodeIncarnation, long epoch, boolean connected,
                           long sessionExpirySeconds, long disconnectedAtMillis, PendingWill will, String requestId,
                           String clientType, boolean queuing, ClientInfo client, long decidedAt) {

    /** A session expiry interval that never ends. */
    public static final long NEVER_EXPIRES = 0xFFFF_FFFFL;

    /** {@link #decidedAt} of a record whose writer did not say. */
    public static final long UNKNOWN = -1;

    public SessionState {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(clientType, "clientType");
    }

    /** A state whose deciding event is not known ({@link #UNKNOWN}). */
    public SessionState(String clientId, String nodeId, long nodeIncarnation, long epoch, boolean connected,
            long sessionExpirySeconds, long disconnectedAtMillis, PendingWill will, String requestId,
            String clientType, boolean queuing, ClientInfo client) {
        this(clientId, nodeId, nodeIncarnation, epoch, connected, sessionExpirySeconds, disconnectedAtMillis, will,
                requestId, clientType, queuing, client, UNKNOWN);
    }

    /** A state without connection details, as nodes wrote it before they replicated them. */
    public SessionState(String clientId, String nodeId, long nodeIncarnation, long epoch, boolean connected,
            long sessionExpirySeconds, long disconnectedAtMillis, PendingWill will, String requestId,
            String clientType, boolean queuing) {
        this(clientId, nodeId, nodeIncarnation, epoch, connected, sessionExpirySeconds, disconnectedAtMillis, will,
                requestId, clientType, queuing, null);
    }

    /** When an offline session ends, or {@code Long.MAX_VALUE} if it never does or is connected. */
    public long expiresAtMillis() {
        if (connected || sessionExpirySeconds == NEVER_EXPIRES) {
            return Long.MAX_VALUE;
        }
        return disconnectedAtMillis + sessionExpirySeconds * 1000;
    }

    public SessionState disconnected(long atMillis, long expirySeconds, PendingWill remainingWill) {
        return new SessionState(clientId, nodeId, nodeIncarnation, epoch, false, expirySeconds, atMillis,
                remainingWill, requestId, clientType, expirySeconds > 0, client, decidedAt);
    }

    /** This state as decided by the event at {@code offset} of the client ID's {@code session.events} partition. */
    public SessionState withDecidedAt(long offset) {
        return new SessionState(clientId, nodeId, nodeIncarnation, epoch, connected, sessionExpirySeconds,
                disconnectedAtMillis, will, requestId, clientType, queuing, client, offset);
    }

    /**
     * The connection of a session as the admin API shows it cluster-wide. Every field may be null
     * (or 0) where the connecting node did not know it.
     *
     * @param address           the client's IP address (or the transport's description of its peer)
     * @param username          the user name of its CONNECT, null if none
     * @param protocol          "5", "3.1.1" or "3.1"
     * @param connectedAtMillis when the connection was accepted by its node (asked for, to be exact:
     *                          the connect sequence decides a moment later)
     * @param keepAliveSeconds  the keep alive in force, after the server's bound (0 = none)
     */
    public record ClientInfo(String address, String username, String protocol, long connectedAtMillis,
                             int keepAliveSeconds) {
    }

    /**
     * A will message and its delay.
     *
     * @param message      the will as it is to be published (publisher = the client)
     * @param delaySeconds the Will Delay Interval
     */
    public record PendingWill(BrokerMessage message, long delaySeconds) {

        public PendingWill {
            Objects.requireNonNull(message, "message");
        }
    }
}
