package io.fleetmq.core.security;

/**
 * A change of a credential, a blocked entry or the authentication settings, announced to every node so that each applies it to its
 * cache and its connected clients within a second. It names what changed; nodes read the new state
 * from PostgreSQL.
 *
 * @param kind            what kind of entity changed
 * @param id              the entity's id
 * @param deleted         the entity is gone
 * @param accessChanged   for a credential: its password, user name, client ID or type changed, so
 *                        the clients connected with it must authenticate again (they are disconnected)
 */
public record SecurityChange(Kind kind, String id, boolean deleted, boolean accessChanged) {

    /** {@code SETTINGS}: the runtime overrides of the {@code auth.*} settings changed (id {@code auth}). */
    public enum Kind { CREDENTIAL, BLOCKED, ADMIN_TOKEN, SETTINGS }

    /** Where changes are announced; implemented over Kafka by the node. */
    public interface Announcer {
        /** Announces {@code change}; never throws (a failure is logged and counted; nodes catch up). */
        void announce(SecurityChange change);
    }
}
