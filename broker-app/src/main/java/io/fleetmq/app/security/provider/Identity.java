package io.fleetmq.app.security.provider;

import java.time.Instant;
import java.util.List;

/**
 * Who a client is once a provider let it in, and what it may do: the same for every provider, so
 * that authorization never depends on how a client authenticated.
 *
 * @param provider     the provider that let it in
 * @param credentialId the credential it matched (changes to it reach the client), or null
 * @param username     its user name (for {@code ${username}} in rules), or null
 * @param commonName   its certificate's subject CN (for {@code ${cn}} in rules), or null
 * @param clientType   DEVICE or APPLICATION when the provider decides it, else null
 * @param publish      topic filters it may publish to
 * @param subscribe    topic filters it may subscribe to
 * @param expiresAt    when its authentication ends (a token's expiry): the client is then disconnected; null for never
 */
public record Identity(String provider, String credentialId, String username, String commonName, String clientType,
        List<String> publish, List<String> subscribe, Instant expiresAt) {

    public Identity {
        publish = publish == null ? List.of() : List.copyOf(publish);
        subscribe = subscribe == null ? List.of() : List.copyOf(subscribe);
    }
}
