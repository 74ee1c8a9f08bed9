package io.fleetmq.app.security;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.config.Settings;
import io.fleetmq.app.security.http.HttpAuthSettings;
import io.fleetmq.app.security.jwt.JwtSettings;
import java.util.Map;
import java.util.Set;

/**
 * What a node authenticates MQTT clients with: the provider order and every provider's settings,
 * built from the {@code auth.*} settings. The admin API may override these at runtime (stored in
 * PostgreSQL, announced to every node), except the sizes fixed when the node starts.
 *
 * @param overrides the runtime overrides this was built with (dotted keys), empty when as configured
 */
public record AuthSetup(SecuritySettings security, HttpAuthSettings http, JwtSettings jwt,
        Map<String, String> overrides) {

    /** The part of the settings the admin API may override. */
    public static final String PREFIX = "auth.";

    /** {@code auth.*} settings read only at start: the auth pool's size and the refused log's retention. */
    public static final Set<String> RESTART_ONLY = Set.of("auth.threads", "auth.max-pending", "auth.max-wait",
            "auth.refused-retention");

    /** Settings whose values the admin API never shows. */
    public static final Set<String> SECRETS = Set.of("auth.jwt.hmac-secret", "auth.http.headers");

    public AuthSetup {
        overrides = Map.copyOf(overrides);
    }

    /** Whether the admin API may override {@code key} at runtime. */
    public static boolean changeable(String key) {
        return key.startsWith(PREFIX) && !RESTART_ONLY.contains(key);
    }

    /**
     * The setup from {@code base} with {@code overrides} in place of its values.
     *
     * @throws ConfigException naming the first setting that is not valid, as at start
     * @throws IllegalArgumentException naming a key that cannot be overridden
     */
    public static AuthSetup of(Settings base, Map<String, String> overrides) {
        for (String key : overrides.keySet()) {
            if (!changeable(key)) {
                throw new IllegalArgumentException(key + " cannot be changed at runtime");
            }
        }
        Settings s = base.with(overrides);
        return new AuthSetup(BrokerConfig.security(s), HttpAuthSettings.from(s), JwtSettings.from(s), overrides);
    }
}
