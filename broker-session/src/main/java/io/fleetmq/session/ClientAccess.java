package io.fleetmq.session;

import io.fleetmq.core.mqtt.ReasonCode;

/**
 * What one connected client may do, as its authentication decided: checked on every PUBLISH
 * (before the Kafka write), every SUBSCRIBE filter and the will. Called on the session's actor
 * thread: answers come from memory, never from I/O.
 */
public interface ClientAccess {

    /** Every right. */
    ClientAccess ALLOW_ALL = new ClientAccess() {
    };

    /** Whether the client may publish to {@code topic}: SUCCESS, or the reason code to answer (0x87). */
    default ReasonCode authorizePublish(String topic, int qos, boolean retain) {
        return ReasonCode.SUCCESS;
    }

    /** Whether the client may subscribe to {@code filter} (as sent, with {@code $share/}): SUCCESS, or the SUBACK code. */
    default ReasonCode authorizeSubscribe(String filter, int qos) {
        return ReasonCode.SUCCESS;
    }

    /** Whether a PUBLISH that is not allowed also ends the connection (deny action "disconnect"). */
    default boolean disconnectOnDenied() {
        return false;
    }

    /** The credential the client authenticated with, or null (anonymous, or no security). */
    default String credentialId() {
        return null;
    }

    /** The user name the client authenticated with, or null. */
    default String username() {
        return null;
    }

    /** When the client's authentication ends (a token's expiry): it is then disconnected with 0x87; null for never. */
    default java.time.Instant expiresAt() {
        return null;
    }

    /**
     * What a change of the security settings means for one session: {@link #review} runs on the
     * session's actor thread and must answer from memory.
     */
    interface Review {
        Outcome review(Subject session);

        /**
         * The credential whose clients this review concerns, or null for every session. A session
         * whose client authenticated otherwise keeps what it has without a turn of its actor, so a
         * change of one credential costs its own sessions, not every session of the node.
         */
        default String credentialId() {
            return null;
        }

        /** {@code review}, for the sessions whose client authenticated with {@code credentialId} only. */
        static Review concerning(String credentialId, Review review) {
            java.util.Objects.requireNonNull(credentialId, "credentialId");
            return new Review() {
                @Override
                public Outcome review(Subject session) {
                    return review.review(session);
                }

                @Override
                public String credentialId() {
                    return credentialId;
                }
            };
        }
    }

    /**
     * A session under review.
     *
     * @param access    what its client may do now
     * @param address   the address its client connected from (null if unknown)
     * @param connected whether its client is connected now
     */
    record Subject(String clientId, ClientAccess access, java.net.InetAddress address, boolean connected) {
    }

    /**
     * The answer of a review.
     *
     * @param replacement the access from now on (null keeps the current one)
     * @param disconnect  when not null, the client's connection ends with this reason code
     * @param reason      the reason string of that DISCONNECT
     */
    record Outcome(ClientAccess replacement, ReasonCode disconnect, String reason) {

        public static final Outcome KEEP = new Outcome(null, null, null);

        public static Outcome replace(ClientAccess access) {
            return new Outcome(access, null, null);
        }

        public static Outcome disconnect(ReasonCode code, String reason) {
            return new Outcome(null, code, reason);
        }
    }
}
