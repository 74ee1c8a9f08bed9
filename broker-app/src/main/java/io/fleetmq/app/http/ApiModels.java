package io.fleetmq.app.http;

import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.Page;
import io.fleetmq.core.security.RefusedConnection;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;

/**
 * The JSON bodies of the admin API. Their record components are the fields on the wire and, through
 * swagger-core, the schemas in the OpenAPI document. No body that the API writes holds a password
 * or a password hash.
 */
final class ApiModels {

    private ApiModels() {
    }

    @Schema(description = "What went wrong")
    record ErrorBody(
            @Schema(description = "a short code: bad_request, unauthorized, not_found, method_not_allowed, conflict, unavailable, internal")
            String error,
            @Schema(description = "for the caller; names the field at fault where there is one")
            String message) {
    }

    record LoginRequest(String username, String password) {
        @Override
        public String toString() {
            return "LoginRequest[username=" + username + "]";
        }
    }

    record LoginResponse(
            @Schema(description = "send as 'Authorization: Bearer <token>'") String token,
            @Schema(format = "date-time") Instant expiresAt) {
    }

    record CreatedId(String id) {
    }

    @Schema(description = "A credential as written by a client: a PUT replaces every field, except that an"
            + " omitted (or null) password keeps the current one. A basic credential names a username, a clientId"
            + " or both; an x509 credential names only certCommonName (no username, clientId or password)")
    record CredentialRequest(
            @Schema(description = "the provider that checks it: basic (user name / client ID / password in"
                    + " CONNECT), scram (SCRAM-SHA-256 / SCRAM-SHA-512 through MQTT 5 enhanced authentication) or x509 (TLS client"
                    + " certificate)",
                    allowableValues = {"basic", "scram", "x509"}) String type,
            @Schema(description = "the MQTT user name it matches; at least one of username and clientId (basic);"
                    + " required for scram, which matches the user name of the SCRAM exchange",
                    nullable = true) String username,
            @Schema(description = "the MQTT client ID it matches (basic only)", nullable = true) String clientId,
            @Schema(description = "the password a client must give, never returned. basic: at most 72 bytes in"
                    + " UTF-8, stored as a bcrypt hash; null: no password on create, keep on update. scram:"
                    + " required on create, stored only as SCRAM keys (salt, iterations, StoredKey, ServerKey);"
                    + " null on update keeps them unless type or algorithm change",
                    nullable = true, format = "password") String password,
            @Schema(description = "overrides the client ID pattern; null: go by the pattern",
                    allowableValues = {"DEVICE", "APPLICATION"}, nullable = true) String clientType,
            @Schema(description = "topic filters the client may publish to; ${clientid}, ${username} and ${cn}"
                    + " (the client certificate's common name) stand for one whole level; a filter starting"
                    + " with '!' denies, and wins over every allow rule") List<String> publish,
            @Schema(description = "topic filters the client may subscribe to; '!' denies every subscription"
                    + " whose filter overlaps it") List<String> subscribe,
            @Schema(description = "scram only, required there: the hash function; SHA-256 is derived with 4096"
                    + " PBKDF2 iterations, SHA-512 with 10000", allowableValues = {"SHA-256", "SHA-512"},
                    nullable = true) String algorithm,
            @Schema(description = "(x509, required) the subject common name (CN) of a certificate on the client's"
                    + " verified chain: its own or a CA's above it", nullable = true) String certCommonName,
            @Schema(description = "(x509) whether certCommonName is a regular expression that must match the"
                    + " whole CN; default false", nullable = true) Boolean certCommonNameRegex,
            @Schema(description = "(basic) instead of password: an existing hash to keep, so a migrated"
                    + " client keeps its password. Accepted: bcrypt ($2a$, $2b$, $2y$) and Mosquitto's $7$"
                    + " (PBKDF2-SHA512) and $6$ (SHA-512) as mosquitto_passwd writes them. Never returned",
                    nullable = true, format = "password") String passwordHash) {
        @Override
        public String toString() {
            return "CredentialRequest[type=" + type + ", username=" + username + ", clientId=" + clientId
                    + ", certCommonName=" + certCommonName + "]";
        }
    }

    record CredentialView(String id, String type, String username, String clientId,
            @Schema(description = "whether a password is required") boolean hasPassword,
            @Schema(allowableValues = {"DEVICE", "APPLICATION"}, nullable = true) String clientType,
            List<String> publish, List<String> subscribe,
            @Schema(format = "date-time") Instant createdAt,
            @Schema(format = "date-time") Instant updatedAt,
            @Schema(description = "scram: the hash function of its SCRAM keys", allowableValues = {"SHA-256", "SHA-512"},
                    nullable = true) String algorithm,
            @Schema(description = "(x509) the certificate common name it matches, or its pattern", nullable = true)
            String certCommonName,
            @Schema(description = "(x509) whether certCommonName is a regular expression") boolean certCommonNameRegex,
            @Schema(description = "(basic) SHA-256 of the stored hash, hex: tells an import whether the hash it"
                    + " would set is already there; reveals neither password nor hash (their salt stays hidden)",
                    nullable = true) String passwordFingerprint) {

        static CredentialView of(Credential c) {
            return new CredentialView(c.id(), c.type(), c.username(), c.clientId(),
                    c.passwordHash() != null || c.scram() != null, c.clientType(), c.publish(), c.subscribe(),
                    c.createdAt(), c.updatedAt(), c.scram() == null ? null : c.scram().algorithm().apiName(),
                    c.certCommonName(), c.certCommonNameRegex(), fingerprint(c.passwordHash()));
        }

        /** Hex SHA-256 of a stored hash, or null. */
        static String fingerprint(String hash) {
            if (hash == null) {
                return null;
            }
            try {
                return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                        .digest(hash.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    record CredentialPage(List<CredentialView> items, long total, int page, int pageSize) {
        static CredentialPage of(Page<Credential> p) {
            return new CredentialPage(p.items().stream().map(CredentialView::of).toList(), p.total(), p.page(),
                    p.pageSize());
        }
    }

    record BlockedRequest(
            @Schema(allowableValues = {"client_id", "username", "ip", "regex"}) String type,
            @Schema(description = "what is blocked: a client ID, a user name, an IP address or CIDR range, or a"
                    + " regular expression matched against the whole target") String value,
            @Schema(description = "for regex: what it is matched against", nullable = true,
                    allowableValues = {"client_id", "username", "ip"}) String target,
            @Schema(description = "when the block ends (ISO-8601, in the future); null: never", nullable = true,
                    format = "date-time") String expiresAt) {
    }

    record BlockedView(String id, String type, String value, String target,
            @Schema(format = "date-time", nullable = true) Instant expiresAt,
            @Schema(description = "whether expiresAt has passed") boolean expired,
            @Schema(format = "date-time") Instant createdAt) {

        static BlockedView of(BlockEntry e, Instant now) {
            return new BlockedView(e.id(), e.type(), e.value(), e.target(), e.expiresAt(), e.expired(now),
                    e.createdAt());
        }
    }

    record BlockedPage(List<BlockedView> items, long total, int page, int pageSize) {
        static BlockedPage of(Page<BlockEntry> p, Instant now) {
            return new BlockedPage(p.items().stream().map(e -> BlockedView.of(e, now)).toList(), p.total(), p.page(),
                    p.pageSize());
        }
    }

    record RefusedView(String clientId, String username, String address, boolean passwordGiven, boolean tls,
            @Schema(allowableValues = {RefusedConnection.BAD_CREDENTIALS, RefusedConnection.NOT_AUTHORIZED,
                    RefusedConnection.BLOCKED, RefusedConnection.ANONYMOUS_REFUSED, RefusedConnection.AUTH_UNAVAILABLE,
                    RefusedConnection.AUTH_BUSY, RefusedConnection.BAD_AUTH_METHOD}) String reason,
            @Schema(format = "date-time") Instant firstAt,
            @Schema(format = "date-time") Instant lastAt,
            long count) {

        static RefusedView of(RefusedConnection r) {
            return new RefusedView(r.clientId(), r.username(), r.address(), r.passwordGiven(), r.tls(), r.reason(),
                    r.firstAt(), r.lastAt(), r.count());
        }
    }

    record RefusedPage(List<RefusedView> items, long total, int page, int pageSize) {
        static RefusedPage of(Page<RefusedConnection> p) {
            return new RefusedPage(p.items().stream().map(RefusedView::of).toList(), p.total(), p.page(), p.pageSize());
        }
    }

    @Schema(description = "Changes of the auth.* settings, merged into those stored before. A key is a setting's"
            + " dotted name (auth.jwt.hmac-secret) or its environment variable (AUTH_JWT_HMAC_SECRET); a value"
            + " is the setting's text as in fleetmq.yml; null puts the setting back to its configured value")
    record AuthSettingsRequest(java.util.Map<String, String> settings) {
        @Override
        public String toString() {
            return "AuthSettingsRequest[" + (settings == null ? "null" : settings.keySet()) + "]";
        }
    }

    @Schema(description = "One auth.* setting as the nodes apply it")
    record AuthSettingView(
            @Schema(description = "dotted name, as in fleetmq.yml") String key,
            @Schema(description = "the environment variable that configures it") String env,
            @Schema(description = "its value; null for a secret (see set)", nullable = true) String value,
            @Schema(description = "a secret, whose value is never shown") boolean secret,
            @Schema(description = "whether it has a value (not empty)") boolean set,
            @Schema(description = "admin: overridden through this API; configuration: file, environment or default",
                    allowableValues = {"admin", "configuration"}) String source,
            @Schema(description = "false for settings read only when a node starts") boolean changeable) {
    }

    @Schema(description = "The authentication settings every node applies: the configuration with the overrides"
            + " stored through this API")
    record AuthSettingsView(
            @Schema(description = "the providers asked at CONNECT, in order") List<String> providers,
            List<AuthSettingView> settings) {
    }
}
