package io.fleetmq.app.security.provider;

/**
 * One way of authenticating MQTT clients at CONNECT. The node asks its providers in the configured
 * order ({@code auth.providers}, {@code AUTH_PROVIDERS}); the first that answers allowed or denied
 * decides, one that answers "not mine" passes the CONNECT on. When every provider passes, the client
 * is anonymous.
 */
public interface AuthProvider extends AutoCloseable {

    /** The name operators list in {@code AUTH_PROVIDERS}: {@code basic}, {@code x509}, {@code jwt}, {@code http}. */
    String name();

    /**
     * Decides a CONNECT. Runs on one of the node's auth threads and may block, within the provider's
     * own timeouts; never throws (an unexpected failure is {@link AuthResult#unavailable}).
     */
    AuthResult authenticate(AuthRequest request);

    /**
     * Decides a CONNECT from memory alone, on the caller's thread, when the provider can (a recent
     * answer it remembers): a client that connected recently then does not wait behind a storm.
     *
     * @return the answer, or null when deciding needs {@link #authenticate} (I/O or a password hash)
     */
    default AuthResult quick(AuthRequest request) {
        return null;
    }

    /**
     * A credential was created, changed or deleted, or what changed is unknown: whatever the provider
     * remembers of credentials must be read again. Called on the node's thread for security changes.
     */
    default void credentialsChanged() {
    }

    @Override
    default void close() {
    }
}
