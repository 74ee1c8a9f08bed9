package io.fleetmq.app.security;

import io.fleetmq.core.security.Credential;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user name's credentials are read once for all its client IDs while no credential matches by
 * client ID alone; what a CONNECT may match stays as it was: a credential naming the client ID
 * first, then the one naming none, and, once a credential by client ID alone exists, that one too.
 * Changes are seen at once.
 */
class CredentialLookupTest {

    @TempDir
    static Path dataDir;
    static SecurityFixture fx;

    @BeforeAll
    static void start() {
        fx = SecurityFixture.startNode(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        if (fx != null) {
            fx.close();
        }
    }

    private static void expect(String clientId, String username, String password, int code) throws Exception {
        SecurityFixture.connect(fx.broker().mqttPort(), 5, clientId, username, password).expect(code).close();
    }

    @Test
    void aFleetsUserNameMatchesEveryClientIdAndCredentialsNamingOneOnlyThatOne() throws Exception {
        Credential shared = fx.credential("fleet", null, "fleet-pw", List.of(), List.of());
        fx.credential("fleet", "dev-special", "special-pw", List.of(), List.of());
        expect("dev-1", "fleet", "fleet-pw", 0x00);
        expect("dev-2", "fleet", "fleet-pw", 0x00); // from what was read for dev-1
        expect("dev-1", "fleet", "special-pw", 0x86);
        expect("dev-special", "fleet", "special-pw", 0x00);
        expect("dev-special", "fleet", "fleet-pw", 0x00); // the credential naming none comes next
        expect("dev-1", "other", "fleet-pw", 0x86);

        // A credential made for one more client ID of the user name is seen at once.
        fx.credential("fleet", "dev-3", "dev-3-pw", List.of(), List.of());
        expect("dev-3", "fleet", "dev-3-pw", 0x00);
        expect("dev-2", "fleet", "dev-3-pw", 0x86);

        // One by client ID alone: a CONNECT with that client ID may match it after the user name's.
        fx.credential(null, "dev-solo", "solo-pw", List.of(), List.of());
        expect("dev-solo", "fleet", "solo-pw", 0x00);
        expect("dev-solo", "fleet", "fleet-pw", 0x00);
        expect("dev-4", "fleet", "solo-pw", 0x86);

        fx.delete(shared);
        expect("dev-1", "fleet", "fleet-pw", 0x86);
        expect("dev-3", "fleet", "dev-3-pw", 0x00);
    }
}
