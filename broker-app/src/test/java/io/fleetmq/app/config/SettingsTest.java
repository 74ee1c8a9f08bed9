package io.fleetmq.app.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsTest {

    @TempDir
    Path dir;

    private final Map<String, String> env = new HashMap<>();

    private Settings load(String yaml) throws IOException {
        Path file = null;
        if (yaml != null) {
            file = dir.resolve("fleetmq.yml");
            Files.writeString(file, yaml);
        }
        return Settings.load(file, env::get);
    }

    @Test
    void everyShippedSettingHasACommentAndAnEnvironmentVariable() throws IOException {
        List<String> lines;
        try (InputStream in = Settings.class.getResourceAsStream(Settings.SHIPPED_RESOURCE)) {
            lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
        int settings = 0;
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).trim().startsWith("#") && lines.get(i).contains("${")) {
                settings++;
                assertTrue(lines.get(i - 1).trim().startsWith("#"),
                        "setting on line " + (i + 1) + " has no comment above it: " + lines.get(i));
            }
        }
        assertEquals(settings, Settings.shipped().size());
        assertTrue(Settings.shipped().containsKey("listeners.tcp.port"));
        assertEquals("MQTT_TCP_PORT", Settings.shipped().get("listeners.tcp.port").env());
    }

    @Test
    void theIssueNamedVariablesAreTheOnesDeclared() {
        Map<String, String> expected = Map.of(
                "kafka.bootstrap-servers", "KAFKA_BOOTSTRAP_SERVERS",
                "redis.url", "REDIS_URL",
                "database.url", "DATABASE_URL",
                "database.user", "DATABASE_USER",
                "database.password", "DATABASE_PASSWORD",
                "listeners.tls.port", "MQTT_TLS_PORT",
                "listeners.ws.port", "MQTT_WS_PORT",
                "listeners.wss.port", "MQTT_WSS_PORT",
                "listeners.http.port", "HTTP_PORT",
                "broker.node-id", "BROKER_NODE_ID");
        expected.forEach((key, envName) -> assertEquals(envName, Settings.shipped().get(key).env(), key));
        assertEquals("BIND_ADDRESS", Settings.shipped().get("listeners.bind-address").env());
        assertEquals("BROKER_DATA_DIR", Settings.shipped().get("broker.data-dir").env());
    }

    @Test
    void defaultsApplyWithoutFileOrEnvironment() throws IOException {
        Settings s = load(null);
        assertEquals(1883, s.port("listeners.tcp.port"));
        assertEquals(8883, s.port("listeners.tls.port"));
        assertEquals(8084, s.port("listeners.ws.port"));
        assertEquals(8085, s.port("listeners.wss.port"));
        assertEquals(8083, s.port("listeners.http.port"));
        assertEquals("./data", s.string("broker.data-dir"));
    }

    @Test
    void environmentWinsOverFileWhichWinsOverDefault() throws IOException {
        Settings fileOnly = load("listeners:\n  tcp:\n    port: 1884\n  http:\n    port: 9000\n");
        assertEquals(1884, fileOnly.port("listeners.tcp.port"));
        env.put("MQTT_TCP_PORT", "1885");
        Settings both = load("listeners:\n  tcp:\n    port: 1884\n  http:\n    port: 9000\n");
        assertEquals(1885, both.port("listeners.tcp.port"));
        assertEquals(9000, both.port("listeners.http.port"));
    }

    @Test
    void aFileMayUseThePlaceholderFormToo() throws IOException {
        env.put("MY_PORT", "2000");
        Settings s = load("listeners:\n  tcp:\n    port: \"${MY_PORT:1999}\"\n  http:\n    port: \"${UNSET_PORT:7000}\"\n");
        assertEquals(2000, s.port("listeners.tcp.port"));
        assertEquals(7000, s.port("listeners.http.port"));
    }

    @Test
    void unknownKeyIsRefusedNamingKeyAndFile() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> load("listeners:\n  tcp:\n    prot: 1884\n"));
        assertTrue(e.getMessage().contains("unknown setting 'listeners.tcp.prot'"), e.getMessage());
        assertTrue(e.getMessage().contains("fleetmq.yml"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void badValuesNameTheSettingAndItsVariable() throws IOException {
        env.put("MQTT_TCP_PORT", "abc");
        ConfigException e = assertThrows(ConfigException.class, () -> load(null).port("listeners.tcp.port"));
        assertEquals("setting listeners.tcp.port (MQTT_TCP_PORT): 'abc' is not a whole number", e.getMessage());

        env.put("MQTT_TCP_PORT", "70000");
        e = assertThrows(ConfigException.class, () -> load(null).port("listeners.tcp.port"));
        assertTrue(e.getMessage().contains("outside 0..65535"), e.getMessage());

        env.put("KAFKA_REQUEST_TIMEOUT", "ten seconds");
        e = assertThrows(ConfigException.class, () -> load(null).duration("kafka.request-timeout"));
        assertTrue(e.getMessage().startsWith("setting kafka.request-timeout (KAFKA_REQUEST_TIMEOUT)"), e.getMessage());

        env.put("MQTT_TLS_ENABLED", "maybe");
        e = assertThrows(ConfigException.class, () -> load(null).bool("listeners.tls.enabled"));
        assertTrue(e.getMessage().contains("MQTT_TLS_ENABLED"), e.getMessage());
    }

    @Test
    void durationsTakeAUnit() throws IOException {
        env.put("KAFKA_REQUEST_TIMEOUT", "750ms");
        assertEquals(Duration.ofMillis(750), load(null).duration("kafka.request-timeout"));
        env.put("KAFKA_REQUEST_TIMEOUT", "7d");
        assertEquals(Duration.ofDays(7), load(null).duration("kafka.request-timeout"));
        env.put("MQTT_AUTH_CACHE_TTL", "0");
        assertEquals(Duration.ZERO, load(null).duration("auth.cache-ttl"), "zero needs no unit");
        env.put("MQTT_AUTH_CACHE_TTL", "5");
        assertThrows(ConfigException.class, () -> load(null).duration("auth.cache-ttl"), "other numbers do");
    }

    @Test
    void listsAreNotSettings() {
        ConfigException e = assertThrows(ConfigException.class, () -> load("kafka:\n  bootstrap-servers:\n    - a:1\n    - b:2\n"));
        assertTrue(e.getMessage().contains("kafka.bootstrap-servers"), e.getMessage());
    }

    @Test
    void aMissingConfigFileIsNamed() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> Settings.load(dir.resolve("nope.yml"), env::get));
        assertTrue(e.getMessage().contains("nope.yml"), e.getMessage());
    }

    @Test
    void malformedYamlIsOneLine() {
        ConfigException e = assertThrows(ConfigException.class, () -> load("listeners: [unclosed\n"));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void overridesLieOverFileAndEnvironmentAndNameOnlyDeclaredSettings() throws IOException {
        env.put("AUTH_PROVIDERS", "basic,x509");
        Settings base = load("auth:\n  jwt:\n    issuer: file-issuer\n");
        Settings over = base.with(java.util.Map.of("auth.providers", "basic,jwt"));
        assertEquals("basic,jwt", over.string("auth.providers"));
        assertEquals("file-issuer", over.string("auth.jwt.issuer"), "what is not overridden stays");
        assertEquals("basic,x509", base.string("auth.providers"), "the base is not changed");
        assertThrows(IllegalArgumentException.class, () -> base.with(java.util.Map.of("auth.nope", "1")));

        assertEquals(java.util.Optional.of("auth.jwt.hmac-secret"), base.keyOf("AUTH_JWT_HMAC_SECRET"));
        assertEquals(java.util.Optional.of("auth.jwt.hmac-secret"), base.keyOf("auth.jwt.hmac-secret"));
        assertEquals(java.util.Optional.empty(), base.keyOf("NO_SUCH_VARIABLE"));
        assertEquals("AUTH_PROVIDERS", base.env("auth.providers"));
    }

    @Test
    void defaultsGivenAtLoadReplaceTheShippedOnesButNotTheFileOrTheEnvironment() throws IOException {
        Path file = dir.resolve("fleetmq.yml");
        Files.writeString(file, "kafka:\n  session-events-partitions: 5\n");
        env.put("KAFKA_DEVICE_PERSISTED_PARTITIONS", "7");
        Settings s = Settings.load(file, env::get, Map.of("kafka.publish-partitions", "2",
                "kafka.session-events-partitions", "3", "kafka.device-persisted-partitions", "4"));
        assertEquals("2", s.string("kafka.publish-partitions"));
        assertEquals("5", s.string("kafka.session-events-partitions"));
        assertEquals("7", s.string("kafka.device-persisted-partitions"));
        assertEquals("16", Settings.load(file, env::get).string("kafka.publish-partitions"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Settings.load(null, env::get, Map.of("kafka.no-such", "1")));
        assertTrue(e.getMessage().contains("kafka.no-such"), e.getMessage());
    }
}
