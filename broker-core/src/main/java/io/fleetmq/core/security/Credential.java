package io.fleetmq.core.security;

import io.fleetmq.core.security.scram.ScramKeys;
import java.time.Instant;
import java.util.List;

/**
 * What lets an MQTT client in, and what it may then do. A {@code basic} credential is matched by user
 * name, by client ID, or by both (whichever of the two it names must equal the CONNECT's); its password,
 * when it has one, must be given. An {@code x509} credential is matched by the subject common name of a
 * certificate in the chain the client presented in the TLS handshake, and has no password, user name
 * or client ID. Besides access it decides the client's type and its rules.
 *
 * @param id           stable identifier (a UUID)
 * @param type         the provider that checks it: {@code basic} (user name / client ID / password) or
 *                     {@code x509} (client certificate) or {@code scram} (user name, SCRAM exchange
 *                     through MQTT 5 enhanced authentication)
 * @param username     the user name it matches, or null when it does not look at the user name
 * @param clientId     the client ID it matches, or null when it does not look at the client ID
 * @param passwordHash bcrypt ({@code $2a/$2b/$2y$}) or Mosquitto ({@code $7$}, {@code $6$}) hash, or
 *                     null when no password is needed
 * @param clientType   {@code DEVICE} or {@code APPLICATION}, overriding the client ID pattern, or null
 *                     to go by the pattern
 * @param publish      topic filters the client may publish to (placeholders allowed, see {@link TopicRules})
 * @param subscribe    topic filters the client may subscribe to
 * @param updatedAt    when it was last written
 * @param scram        for {@code scram}: the stored form of its password (never the password); else null
 * @param certCommonName      ({@code x509}) the subject common name a certificate must have, or the
 *                            pattern it must fully match; null for other types
 * @param certCommonNameRegex ({@code x509}) whether {@code certCommonName} is a regular expression
 */
public record Credential(String id, String type, String username, String clientId, String passwordHash,
        String clientType, List<String> publish, List<String> subscribe, Instant createdAt, Instant updatedAt,
        ScramKeys scram, String certCommonName, boolean certCommonNameRegex) {

    public static final String BASIC = "basic";
    public static final String SCRAM = "scram";
    public static final String X509 = "x509";

    /** A credential without SCRAM keys or certificate name (every type but {@code scram} and {@code x509}). */
    public Credential(String id, String type, String username, String clientId, String passwordHash,
            String clientType, List<String> publish, List<String> subscribe, Instant createdAt, Instant updatedAt) {
        this(id, type, username, clientId, passwordHash, clientType, publish, subscribe, createdAt, updatedAt, null,
                null, false);
    }

    /** A credential with SCRAM keys and no certificate name. */
    public Credential(String id, String type, String username, String clientId, String passwordHash,
            String clientType, List<String> publish, List<String> subscribe, Instant createdAt, Instant updatedAt,
            ScramKeys scram) {
        this(id, type, username, clientId, passwordHash, clientType, publish, subscribe, createdAt, updatedAt, scram,
                null, false);
    }

    /** An {@code x509} credential: a certificate name, no SCRAM keys. */
    public Credential(String id, String type, String username, String clientId, String passwordHash,
            String clientType, List<String> publish, List<String> subscribe, Instant createdAt, Instant updatedAt,
            String certCommonName, boolean certCommonNameRegex) {
        this(id, type, username, clientId, passwordHash, clientType, publish, subscribe, createdAt, updatedAt, null,
                certCommonName, certCommonNameRegex);
    }

    public Credential {
        publish = publish == null ? List.of() : List.copyOf(publish);
        subscribe = subscribe == null ? List.of() : List.copyOf(subscribe);
    }

    /** Whether this credential names both a user name and a client ID, the most specific kind. */
    public boolean matchesBoth() {
        return username != null && clientId != null;
    }
}
