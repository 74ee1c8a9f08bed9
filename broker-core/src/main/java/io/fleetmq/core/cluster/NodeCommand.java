package io.fleetmq.core.cluster;

import java.util.Objects;

/** What the connect sequence tells one node, through that node's {@code node.<node>} topic. */
public sealed interface NodeCommand {

    /** The client the command is about; null for a command to the node itself ({@link Drain}). */
    String clientId();

    /**
     * The CONNECT {@code requestId} is accepted as connection {@code epoch} of the client ID.
     *
     * @param sessionPresent whether a session continues [MQTT-3.2.2-2]
     * @param queuing whether the session persists: its DEVICE queue and QoS 2 receipts are kept in Redis
     * @param clearStore whether the node deletes what Redis holds under the client ID (a DEVICE queue,
     *     QoS 2 receipts): the store of a persistent session that this CONNECT ends, or what an earlier
     *     session may have left before a persistent session uses the store. Between sessions that do
     *     not persist there is nothing to delete: they never write to Redis.
     */
    record ConnectAccepted(String requestId, String clientId, long epoch, boolean sessionPresent, boolean queuing,
            boolean clearStore) implements NodeCommand {
        public ConnectAccepted {
            Objects.requireNonNull(requestId, "requestId");
            Objects.requireNonNull(clientId, "clientId");
        }

        /**
         * The answer to a CONNECT that starts or continues a session.
         *
         * @param before the client ID's session when the CONNECT was decided; null: none
         */
        public static ConnectAccepted decided(String requestId, String clientId, long epoch, SessionState before,
                boolean sessionPresent, boolean queuing) {
            boolean persisted = before != null && before.queuing();
            boolean clear = sessionPresent ? queuing && !persisted : queuing || persisted;
            return new ConnectAccepted(requestId, clientId, epoch, sessionPresent, queuing, clear);
        }
    }

    /**
     * Another node took the client ID over with connection {@code epoch}: disconnect any older
     * connection of it with 0x8E [MQTT-3.1.4-3] and let the session go; its will is handled by the
     * connect sequence.
     */
    record TakeOver(String clientId, long epoch) implements NodeCommand {
        public TakeOver {
            Objects.requireNonNull(clientId, "clientId");
        }
    }

    /**
     * A message was added to the persistent DEVICE queue of {@code clientId}, connected to this
     * node, as entry {@code seq}; {@code message} saves reading it back from the queue.
     */
    record Queued(String clientId, long seq, Downlink message) implements NodeCommand {
        public Queued {
            Objects.requireNonNull(clientId, "clientId");
            Objects.requireNonNull(message, "message");
        }
    }

    /**
     * An operator asks the node to send its clients to other nodes and refuse new ones
     * ({@code drain} true), or to take clients again (false). Addressed to the node, not a client.
     *
     * @param requestedBy the node whose admin API took the request, for the log
     */
    record Drain(boolean drain, String requestedBy) implements NodeCommand {
        public Drain {
            Objects.requireNonNull(requestedBy, "requestedBy");
        }

        @Override
        public String clientId() {
            return null;
        }
    }

    /**
     * An operator asked, on any node, that the connection of {@code clientId} held here be closed
     * with 0x98 Administrative action (a 3.1.1 client's is just closed) and, with {@code endSession},
     * that its session end as on expiry. {@code epoch} is the connection the operator saw: a client
     * that reconnected meanwhile is left alone. Nodes that do not know this command skip it as
     * malformed.
     */
    record AdminDisconnect(String clientId, long epoch, boolean endSession) implements NodeCommand {
        public AdminDisconnect {
            Objects.requireNonNull(clientId, "clientId");
        }
    }
}
