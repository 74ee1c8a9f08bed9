package io.fleetmq.app.security;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class AnonymousPolicyTest {

    private static SecuritySettings policy(SecuritySettings.Anonymous anonymous) {
        return new SecuritySettings(List.of("basic"), anonymous, List.of("#"), List.of("#"), false, 2, 10, Duration.ZERO,
                Duration.ofSeconds(1), Duration.ofDays(1));
    }

    @Test
    @DisplayName("auto: anonymous clients only while the MQTT listeners are bound to a loopback address")
    void auto() {
        SecuritySettings auto = policy(SecuritySettings.Anonymous.AUTO);
        assertTrue(auto.anonymousAllowed("127.0.0.1"));
        assertTrue(auto.anonymousAllowed("::1"));
        assertTrue(auto.anonymousAllowed("127.0.0.2"));
        assertFalse(auto.anonymousAllowed("0.0.0.0"), "every address");
        assertFalse(auto.anonymousAllowed("::"), "every address");
        assertFalse(auto.anonymousAllowed("10.1.2.3"));
        assertFalse(auto.anonymousAllowed("no-such-host.invalid"), "unknown: reachable, to be safe");
    }

    @Test
    @DisplayName("true and false decide whatever the address")
    void explicit() {
        assertTrue(policy(SecuritySettings.Anonymous.TRUE).anonymousAllowed("0.0.0.0"));
        assertFalse(policy(SecuritySettings.Anonymous.FALSE).anonymousAllowed("127.0.0.1"));
    }
}
