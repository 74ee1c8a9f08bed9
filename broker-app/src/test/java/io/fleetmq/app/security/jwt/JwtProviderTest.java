package io.fleetmq.app.security.jwt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.app.security.provider.AuthResult;
import io.fleetmq.app.security.provider.Identity;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.security.RefusedConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Signature and claim checks of the jwt provider, with keys from a secret and from PEM files. */
class JwtProviderTest {

    static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");
    static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
    static final KeyPair RSA = Tokens.rsa();
    static final KeyPair EC = Tokens.ec();

    @TempDir
    Path dir;

    static AuthRequest request(String clientId, String username, String password) {
        return new AuthRequest(clientId, username, password == null ? null : password.getBytes(StandardCharsets.UTF_8),
                null, false, List.of(), ProtocolVersion.V5);
    }

    static JwtProvider provider(SettingsBuilder s) {
        return JwtProvider.create(s.build(), CLOCK);
    }

    static SettingsBuilder hmacSettings() {
        SettingsBuilder s = new SettingsBuilder();
        s.hmacSecret = Tokens.SECRET;
        return s;
    }

    SettingsBuilder pemSettings() throws Exception {
        SettingsBuilder s = new SettingsBuilder();
        s.publicKeyFile = Tokens.write(dir, "keys.pem", Tokens.pem(RSA.getPublic()) + Tokens.pem(EC.getPublic()));
        return s;
    }

    static Identity allowed(AuthResult r) {
        return assertInstanceOf(AuthResult.Allowed.class, r, "allowed").identity();
    }

    static void badCredentials(AuthResult r) {
        AuthResult.Denied d = assertInstanceOf(AuthResult.Denied.class, r, "denied");
        assertEquals(ReasonCode.BAD_USER_NAME_OR_PASSWORD, d.code());
        assertEquals(RefusedConnection.BAD_CREDENTIALS, d.reason());
    }

    static JWTClaimsSet claims(String sub) {
        return Tokens.claims(NOW, sub, b -> { });
    }

    @Test
    @DisplayName("HS256 with the shared secret: allowed, the identity expires with the token (and the skew)")
    void hmac() {
        try (JwtProvider p = provider(hmacSettings())) {
            Identity id = allowed(p.authenticate(request("dev-1", null, Tokens.hmac(Tokens.SECRET, claims("dev-1")))));
            assertEquals("jwt", id.provider());
            assertEquals(NOW.plusSeconds(3600 + 30), id.expiresAt(), "exp and the clock skew");
            assertTrue(id.publish().isEmpty() && id.subscribe().isEmpty(), "no rules configured: nothing");
        }
    }

    @Test
    @DisplayName("RS256 and ES256 verify with the public keys of a PEM file")
    void rsaAndEc() throws Exception {
        try (JwtProvider p = provider(pemSettings())) {
            allowed(p.authenticate(request("c", null, Tokens.rs256(RSA, null, claims("c")))));
            allowed(p.authenticate(request("c", null, Tokens.es256(EC, null, claims("c")))));
            // A key of the same kind that is not configured.
            badCredentials(p.authenticate(request("c", null, Tokens.rs256(Tokens.rsa(), null, claims("c")))));
            badCredentials(p.authenticate(request("c", null, Tokens.es256(Tokens.ec(), null, claims("c")))));
        }
    }

    @Test
    @DisplayName("A certificate in the PEM file verifies tokens signed with its key")
    void certificate() throws Exception {
        KeyPair kp = Tokens.rsa();
        org.bouncycastle.asn1.x500.X500Name name = new org.bouncycastle.asn1.x500.X500Name("CN=issuer");
        var holder = new org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder(name, java.math.BigInteger.ONE,
                Date.from(NOW.minusSeconds(3600)), Date.from(NOW.plusSeconds(86_400)), name, kp.getPublic())
                .build(new org.bouncycastle.operator.jcajce.JcaContentSignerBuilder("SHA256withRSA")
                        .build(kp.getPrivate()));
        String pem = "-----BEGIN CERTIFICATE-----\n" + java.util.Base64.getMimeEncoder().encodeToString(
                holder.getEncoded()) + "\n-----END CERTIFICATE-----\n";
        SettingsBuilder s = new SettingsBuilder();
        s.publicKeyFile = Tokens.write(dir, "cert.pem", pem);
        try (JwtProvider p = provider(s)) {
            allowed(p.authenticate(request("c", null, Tokens.rs256(kp, "any", claims("c")))));
            badCredentials(p.authenticate(request("c", null, Tokens.rs256(RSA, null, claims("c")))));
        }
    }

    @Test
    @DisplayName("exp is required and honoured with the clock skew; nbf in the future is refused")
    void expiry() {
        try (JwtProvider p = provider(hmacSettings())) {
            String expired = Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.expirationTime(Date.from(NOW.minusSeconds(31)))));
            badCredentials(p.authenticate(request("c", null, expired)));
            String withinSkew = Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.expirationTime(Date.from(NOW.minusSeconds(10)))));
            allowed(p.authenticate(request("c", null, withinSkew)));
            String noExp = Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c", b -> b.expirationTime(null)));
            badCredentials(p.authenticate(request("c", null, noExp)));
            String notYet = Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.notBeforeTime(Date.from(NOW.plusSeconds(120)))));
            badCredentials(p.authenticate(request("c", null, notYet)));
            String nbfWithinSkew = Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.notBeforeTime(Date.from(NOW.plusSeconds(20)))));
            allowed(p.authenticate(request("c", null, nbfWithinSkew)));
        }
    }

    @Test
    @DisplayName("Issuer and audience, when configured, must match")
    void issuerAndAudience() {
        SettingsBuilder s = hmacSettings();
        s.issuer = "https://issuer.example";
        s.audience = "fleetmq";
        try (JwtProvider p = provider(s)) {
            allowed(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.issuer("https://issuer.example").audience(List.of("other", "fleetmq")))))));
            badCredentials(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.issuer("https://evil.example").audience("fleetmq"))))));
            badCredentials(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.issuer("https://issuer.example").audience("other"))))));
            badCredentials(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.issuer("https://issuer.example"))))));
        }
    }

    @Test
    @DisplayName("The client-ID claim must equal the client ID; the user-name claim the user name when one is given")
    void clientClaims() {
        SettingsBuilder s = hmacSettings();
        s.clientIdClaim = "sub";
        s.usernameClaim = "preferred_username";
        String token = Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "sensor-1", b -> b.claim("preferred_username", "ann")));
        try (JwtProvider p = provider(s)) {
            assertEquals("ann", allowed(p.authenticate(request("sensor-1", null, token))).username(),
                    "without a user name in the CONNECT the claim is the user name");
            assertEquals("ann", allowed(p.authenticate(request("sensor-1", "ann", token))).username());
            badCredentials(p.authenticate(request("sensor-2", null, token)));
            badCredentials(p.authenticate(request("sensor-1", "bob", token)));
        }
    }

    @Test
    @DisplayName("Rules and client type from claims; an invalid filter or type refuses the token; defaults without claims")
    void rulesFromClaims() {
        SettingsBuilder s = hmacSettings();
        s.publishClaim = "pub";
        s.subscribeClaim = "subs";
        s.clientTypeClaim = "type";
        s.publish = List.of("default/pub");
        s.subscribe = List.of("default/sub/#");
        try (JwtProvider p = provider(s)) {
            Identity id = allowed(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.claim("pub", List.of("devices/${clientid}/up")).claim("subs", List.of("devices/+/down"))
                            .claim("type", "application"))))));
            assertEquals(List.of("devices/${clientid}/up"), id.publish());
            assertEquals(List.of("devices/+/down"), id.subscribe());
            assertEquals("APPLICATION", id.clientType());

            Identity defaults = allowed(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, claims("c")))));
            assertEquals(List.of("default/pub"), defaults.publish());
            assertEquals(List.of("default/sub/#"), defaults.subscribe());
            assertNull(defaults.clientType());

            badCredentials(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.claim("pub", List.of("a/#/b")))))));
            badCredentials(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.claim("subs", "a/b"))))));
            badCredentials(p.authenticate(request("c", null, Tokens.hmac(Tokens.SECRET, Tokens.claims(NOW, "c",
                    b -> b.claim("type", "ROBOT"))))));
        }
    }

    @Test
    @DisplayName("alg none is refused (0x86, not passed on), whatever keys are configured")
    void algNone() throws Exception {
        SettingsBuilder s = pemSettings();
        s.hmacSecret = Tokens.SECRET;
        try (JwtProvider p = provider(s)) {
            String none = Tokens.unsecured(claims("c"));
            assertTrue(JwtProvider.token(none.getBytes(StandardCharsets.US_ASCII)) != null, "shaped like a token");
            assertSame(null, p.quick(request("c", null, none)), "a token waits for an auth thread");
            badCredentials(p.authenticate(request("c", null, none)));
        }
    }

    @Test
    @DisplayName("An HMAC token whose secret is the public key never verifies against the public key")
    void algorithmConfusion() throws Exception {
        SettingsBuilder s = pemSettings();
        String pemText = java.nio.file.Files.readString(s.publicKeyFile);
        try (JwtProvider p = provider(s)) {
            for (byte[] secret : List.of(pemText.getBytes(StandardCharsets.US_ASCII), RSA.getPublic().getEncoded())) {
                String forged = Tokens.sign(JWSAlgorithm.HS256, null, Tokens.signer(() -> new MACSigner(secret)),
                        claims("c"));
                badCredentials(p.authenticate(request("c", null, forged)));
            }
        }
        s.hmacSecret = Tokens.SECRET; // with a secret configured as well
        try (JwtProvider p = provider(s)) {
            String forged = Tokens.sign(JWSAlgorithm.HS256, null,
                    Tokens.signer(() -> new MACSigner(pemText.getBytes(StandardCharsets.US_ASCII))), claims("c"));
            badCredentials(p.authenticate(request("c", null, forged)));
        }
    }

    @Test
    @DisplayName("A tampered payload, a token from another secret and an RS256 token against an EC key are refused")
    void tampered() {
        try (JwtProvider p = provider(hmacSettings())) {
            String token = Tokens.hmac(Tokens.SECRET, claims("c"));
            String[] parts = token.split("\\.");
            String widened = Base64URL.encode(Tokens.claims(NOW, "c", b -> b.claim("pub", List.of("#"))).toString())
                    .toString();
            badCredentials(p.authenticate(request("c", null, parts[0] + "." + widened + "." + parts[2])));
            badCredentials(p.authenticate(request("c", null,
                    Tokens.hmac("another-secret-that-is-long-enough-32", claims("c")))));
            badCredentials(p.authenticate(request("c", null, Tokens.rs256(RSA, null, claims("c")))),
                    "no public key configured");
        }
    }

    private static void badCredentials(AuthResult r, String why) {
        assertInstanceOf(AuthResult.Denied.class, r, why);
        badCredentials(r);
    }

    @Test
    @DisplayName("No password, or one not shaped like a token, is for the next provider")
    void notMine() {
        try (JwtProvider p = provider(hmacSettings())) {
            for (String password : new String[] {null, "s3cret", "my.pass.word", "a.b.c", "x..y",
                    Base64URL.encode("{\"typ\":\"JWT\"}") + ".e30.sig"}) {
                assertSame(AuthResult.NOT_MINE, p.authenticate(request("c", "u", password)), String.valueOf(password));
                assertSame(AuthResult.NOT_MINE, p.quick(request("c", "u", password)), String.valueOf(password));
            }
        }
    }

    @Test
    @DisplayName("Listing jwt with no key is a start-up error naming the settings; unusable key files name theirs")
    void configurationErrors() throws Exception {
        ConfigException none = assertThrows(ConfigException.class, () -> JwtProvider.create(JwtSettings.none(), CLOCK));
        assertTrue(none.getMessage().contains("AUTH_JWT_HMAC_SECRET") && none.getMessage().contains("AUTH_JWT_JWKS_URL")
                && none.getMessage().contains("AUTH_JWT_PUBLIC_KEY_FILE"), none.getMessage());

        SettingsBuilder s = new SettingsBuilder();
        s.publicKeyFile = Tokens.write(dir, "junk.pem", "not a key");
        ConfigException junk = assertThrows(ConfigException.class, () -> provider(s));
        assertTrue(junk.getMessage().startsWith("setting auth.jwt.public-key-file (AUTH_JWT_PUBLIC_KEY_FILE)"),
                junk.getMessage());
        s.publicKeyFile = Tokens.write(dir, "private.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
        assertThrows(ConfigException.class, () -> provider(s));

        SettingsBuilder j = new SettingsBuilder();
        j.jwksFile = Tokens.write(dir, "bad.json", "{\"keys\": 1}");
        ConfigException badSet = assertThrows(ConfigException.class, () -> provider(j));
        assertTrue(badSet.getMessage().contains("AUTH_JWT_JWKS_FILE"), badSet.getMessage());
    }

    @Test
    @DisplayName("A JWK set file verifies tokens by key ID")
    void jwksFile() throws Exception {
        KeyPair other = Tokens.rsa();
        SettingsBuilder s = new SettingsBuilder();
        s.jwksFile = Tokens.write(dir, "jwks.json", Tokens.jwks(java.util.Map.of("k1", RSA, "k2", other)));
        try (JwtProvider p = provider(s)) {
            allowed(p.authenticate(request("c", null, Tokens.rs256(other, "k2", claims("c")))));
            allowed(p.authenticate(request("c", null, Tokens.rs256(RSA, null, claims("c")))));
            badCredentials(p.authenticate(request("c", null, Tokens.rs256(RSA, "k2", claims("c")))));
        }
    }
}
