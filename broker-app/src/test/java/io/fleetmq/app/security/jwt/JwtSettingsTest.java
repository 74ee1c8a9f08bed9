package io.fleetmq.app.security.jwt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.config.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JwtSettingsTest {

    @TempDir
    Path dir;

    private static JwtSettings from(Map<String, String> env) {
        return JwtSettings.from(Settings.load(null, env::get));
    }

    private static String error(Map<String, String> env) {
        return assertThrows(ConfigException.class, () -> from(env)).getMessage();
    }

    @Test
    @DisplayName("Defaults: no key, 5m refresh, 30s skew, no checks, no default rules")
    void defaults() {
        JwtSettings s = from(Map.of());
        assertFalse(s.hasKeys());
        assertEquals(Duration.ofMinutes(5), s.jwksRefresh());
        assertEquals(Duration.ofSeconds(30), s.clockSkew());
        assertNull(s.issuer());
        assertNull(s.clientIdClaim());
        assertTrue(s.publish().isEmpty() && s.subscribe().isEmpty());
    }

    @Test
    @DisplayName("The environment variables of the contract set the provider's settings")
    void fromEnvironment() throws Exception {
        Path pem = Tokens.write(dir, "k.pem", Tokens.pem(Tokens.ec().getPublic()));
        Map<String, String> env = new HashMap<>();
        env.put("AUTH_JWT_HMAC_SECRET", Tokens.SECRET);
        env.put("AUTH_JWT_PUBLIC_KEY_FILE", pem.toString());
        env.put("AUTH_JWT_JWKS_URL", "https://issuer.example/.well-known/jwks.json");
        env.put("AUTH_JWT_JWKS_REFRESH", "10m");
        env.put("AUTH_JWT_CLIENT_ID_CLAIM", "client_id");
        env.put("AUTH_JWT_CLOCK_SKEW", "5s");
        env.put("AUTH_JWT_PUBLISH", "devices/${clientid}/up, devices/${clientid}/status");
        JwtSettings s = from(env);
        assertTrue(s.hasKeys());
        assertEquals(pem, s.publicKeyFile());
        assertEquals("issuer.example", s.jwksUrl().getHost());
        assertEquals(Duration.ofMinutes(10), s.jwksRefresh());
        assertEquals(Duration.ofSeconds(5), s.clockSkew());
        assertEquals("client_id", s.clientIdClaim());
        assertEquals(List.of("devices/${clientid}/up", "devices/${clientid}/status"), s.publish());
        assertFalse(s.toString().contains(Tokens.SECRET), "the secret is never printed");
    }

    @Test
    @DisplayName("Bad values get one line naming the setting, never quoting the secret")
    void errors() {
        assertTrue(error(Map.of("AUTH_JWT_JWKS_URL", "ftp://x/keys")).startsWith(
                "setting auth.jwt.jwks-url (AUTH_JWT_JWKS_URL)"));
        assertTrue(error(Map.of("AUTH_JWT_JWKS_URL", "not a url")).contains("AUTH_JWT_JWKS_URL"));
        assertTrue(error(Map.of("AUTH_JWT_PUBLIC_KEY_FILE", dir.resolve("missing.pem").toString()))
                .contains("AUTH_JWT_PUBLIC_KEY_FILE"));
        assertTrue(error(Map.of("AUTH_JWT_JWKS_FILE", dir.toString())).contains("AUTH_JWT_JWKS_FILE"));
        String shortSecret = error(Map.of("AUTH_JWT_HMAC_SECRET", "too-short"));
        assertTrue(shortSecret.contains("AUTH_JWT_HMAC_SECRET") && !shortSecret.contains("too-short"), shortSecret);
        assertTrue(error(Map.of("AUTH_JWT_SUBSCRIBE", "a/#/b")).contains("AUTH_JWT_SUBSCRIBE"));
        assertTrue(error(Map.of("AUTH_JWT_JWKS_REFRESH", "0")).contains("AUTH_JWT_JWKS_REFRESH"));
    }
}
