package io.fleetmq.app.security.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.app.config.BrokerConfig;
import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.config.Settings;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HttpAuthSettingsTest {

    private final Map<String, String> env = new HashMap<>();

    private HttpAuthSettings settings() {
        return HttpAuthSettings.from(Settings.load(null, env::get));
    }

    private String error() {
        return assertThrows(ConfigException.class, this::settings).getMessage();
    }

    @Test
    void defaults() {
        HttpAuthSettings s = settings();
        assertNull(s.url());
        assertEquals(List.of(), s.headers());
        assertEquals(Duration.ofSeconds(2), s.timeout());
        assertEquals(32, s.maxConcurrent());
        assertEquals(Duration.ofSeconds(30), s.cacheTtl());
        assertFalse(s.failOpen());
    }

    @Test
    void listingHttpWithoutAUrlIsAStartUpErrorNamingBothSettings() {
        env.put("AUTH_PROVIDERS", "basic, HTTP");
        assertEquals("setting auth.http.url (AUTH_HTTP_URL) is required when setting auth.providers (AUTH_PROVIDERS)"
                + " lists http", error());
        ConfigException viaConfig = assertThrows(ConfigException.class,
                () -> BrokerConfig.from(Settings.load(null, env::get), "h"));
        assertTrue(viaConfig.getMessage().startsWith("setting auth.http.url (AUTH_HTTP_URL)"));
        env.put("AUTH_HTTP_URL", "https://id.example.com/mqtt/connect");
        assertEquals("https://id.example.com/mqtt/connect",
                BrokerConfig.from(Settings.load(null, env::get), "h").authHttp().url().toString());
    }

    @Test
    void urlMustBeHttpOrHttpsWithAHostAndNoUserInfo() {
        env.put("AUTH_HTTP_URL", "ftp://id.example.com/x");
        assertEquals("setting auth.http.url (AUTH_HTTP_URL): 'ftp://id.example.com/x' must be an http:// or https://"
                + " URL with a host", error());
        env.put("AUTH_HTTP_URL", "http://exa mple");
        assertTrue(error().startsWith("setting auth.http.url (AUTH_HTTP_URL): 'http://exa mple' is not a URL"));
        env.put("AUTH_HTTP_URL", "http://user:secret@id.example.com/");
        String e = error();
        assertTrue(e.startsWith("setting auth.http.url (AUTH_HTTP_URL) must not carry"), e);
        assertFalse(e.contains("secret"), e);
    }

    @Test
    void headersAreSeparatedByCommasOrByNewlinesWhenThereAreAny() {
        env.put("AUTH_HTTP_HEADERS", "Authorization: Bearer abc, X-Tenant: fleet-1");
        assertEquals(List.of(new HttpAuthSettings.Header("Authorization", "Bearer abc"),
                new HttpAuthSettings.Header("X-Tenant", "fleet-1")), settings().headers());
        env.put("AUTH_HTTP_HEADERS", "Authorization: Bearer abc\nX-Accept-Things: a, b\n");
        assertEquals(List.of(new HttpAuthSettings.Header("Authorization", "Bearer abc"),
                new HttpAuthSettings.Header("X-Accept-Things", "a, b")), settings().headers());
        assertEquals("[Authorization: ***, X-Accept-Things: ***]", settings().headers().toString(), "values stay secret");
    }

    @Test
    void badHeadersAreNamedWithoutTheirValues() {
        env.put("AUTH_HTTP_HEADERS", "Bearer s3cret");
        String e = error();
        assertEquals("setting auth.http.headers (AUTH_HTTP_HEADERS): entry 1 is not 'Name: value'", e);
        env.put("AUTH_HTTP_HEADERS", "X-A: 1, Host: s3cret.example");
        e = error();
        assertTrue(e.startsWith("setting auth.http.headers (AUTH_HTTP_HEADERS): header Host cannot be set"), e);
        assertFalse(e.contains("s3cret"), e);
    }

    @Test
    void otherSettingsAreChecked() {
        env.put("AUTH_HTTP_FAIL", "Open");
        assertTrue(settings().failOpen());
        env.put("AUTH_HTTP_FAIL", "maybe");
        assertEquals("setting auth.http.fail (AUTH_HTTP_FAIL): 'maybe' must be closed or open", error());
        env.remove("AUTH_HTTP_FAIL");
        env.put("AUTH_HTTP_TIMEOUT", "0");
        assertEquals("setting auth.http.timeout (AUTH_HTTP_TIMEOUT): '0' must be greater than zero", error());
        env.put("AUTH_HTTP_TIMEOUT", "500ms");
        env.put("AUTH_HTTP_MAX_CONCURRENT", "0");
        assertTrue(error().startsWith("setting auth.http.max-concurrent (AUTH_HTTP_MAX_CONCURRENT): '0' is outside"));
        env.put("AUTH_HTTP_MAX_CONCURRENT", "4");
        env.put("AUTH_HTTP_CACHE_TTL", "0");
        HttpAuthSettings s = settings();
        assertEquals(Duration.ofMillis(500), s.timeout());
        assertEquals(4, s.maxConcurrent());
        assertEquals(Duration.ZERO, s.cacheTtl());
    }
}
