package io.fleetmq.persistence.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Against the embedded PostgreSQL of the test kit, in a schema of its own; each test under its own prefixes. */
class RuntimeSettingsTest {

    private static SecuritySchema schema;
    private static RuntimeSettings settings;

    @BeforeAll
    static void open() {
        schema = new SecuritySchema(2);
        settings = new RuntimeSettings(schema.dataSource());
    }

    @AfterAll
    static void close() {
        schema.close();
    }

    @Test
    void replaceMakesTheStoredSettingsUnderAPrefixExactlyThoseGiven() {
        assertEquals(Map.of(), settings.all("auth."));
        settings.replace("auth.", Map.of("auth.providers", "basic,jwt", "auth.jwt.issuer", "it's \"quoted\" ünïcode"));
        settings.replace("other.", Map.of("other.thing", "kept"));
        assertEquals(Map.of("auth.providers", "basic,jwt", "auth.jwt.issuer", "it's \"quoted\" ünïcode"),
                settings.all("auth."));

        settings.replace("auth.", Map.of("auth.providers", "basic"));
        assertEquals(Map.of("auth.providers", "basic"), settings.all("auth."), "keys not given are gone");
        assertEquals(Map.of("other.thing", "kept"), settings.all("other."), "other prefixes are untouched");

        settings.replace("auth.", Map.of());
        assertEquals(Map.of(), settings.all("auth."));
    }

    @Test
    void aKeyOutsideThePrefixIsRefusedAndNothingChanges() {
        settings.replace("refused.", Map.of("refused.providers", "basic"));
        assertThrows(IllegalArgumentException.class,
                () -> settings.replace("refused.", Map.of("refused.providers", "jwt", "listeners.tcp.port", "1")));
        assertEquals(Map.of("refused.providers", "basic"), settings.all("refused."));
    }

    @Test
    void aPrefixIsTakenLiterallyNotAsAPattern() {
        settings.replace("a_b.", Map.of("a_b.x", "1"));
        settings.replace("aXb.", Map.of("aXb.y", "2"));
        assertEquals(Map.of("a_b.x", "1"), settings.all("a_b."));
    }
}
