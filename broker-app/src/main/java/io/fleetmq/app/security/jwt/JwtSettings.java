package io.fleetmq.app.security.jwt;

import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.config.Settings;
import io.fleetmq.core.security.TopicRules;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * How the {@code jwt} provider verifies tokens (section {@code auth.jwt} of fleetmq.yml). Empty
 * text settings are null here.
 *
 * @param hmacSecret        shared secret of HS256/384/512 tokens, or null
 * @param publicKeyFile     PEM file of RSA / EC public keys or certificates, or null
 * @param jwksUrl           where a JWK set is fetched from, or null
 * @param jwksRefresh       how often the JWK set at {@code jwksUrl} is fetched again
 * @param jwksTimeout       how long one fetch may take
 * @param jwksMinInterval   fetches caused by an unknown {@code kid} (or no keys yet) are at most one per this
 * @param jwksFile          file holding a JWK set, or null
 * @param clockSkew         leeway of the {@code exp} and {@code nbf} checks
 * @param issuer            required {@code iss}, or null
 * @param audience          a value {@code aud} must contain, or null
 * @param clientIdClaim     claim that must equal the client ID, or null
 * @param usernameClaim     claim that must equal the user name when one is given, or null
 * @param publishClaim      claim holding publish rules, or null
 * @param subscribeClaim    claim holding subscribe rules, or null
 * @param clientTypeClaim   claim holding DEVICE or APPLICATION, or null
 * @param publish           publish rules of a token without a publish claim
 * @param subscribe         subscribe rules of a token without a subscribe claim
 */
public record JwtSettings(String hmacSecret, Path publicKeyFile, URI jwksUrl, Duration jwksRefresh,
        Duration jwksTimeout, Duration jwksMinInterval, Path jwksFile, Duration clockSkew, String issuer,
        String audience, String clientIdClaim, String usernameClaim, String publishClaim, String subscribeClaim,
        String clientTypeClaim, List<String> publish, List<String> subscribe) {

    /** The names operators know the settings by, for messages. */
    static final String HMAC_SECRET = "auth.jwt.hmac-secret (AUTH_JWT_HMAC_SECRET)";
    static final String PUBLIC_KEY_FILE = "auth.jwt.public-key-file (AUTH_JWT_PUBLIC_KEY_FILE)";
    static final String JWKS_URL = "auth.jwt.jwks-url (AUTH_JWT_JWKS_URL)";
    static final String JWKS_FILE = "auth.jwt.jwks-file (AUTH_JWT_JWKS_FILE)";

    /** HS256 needs a secret at least as long as its hash (RFC 7518 3.2). */
    static final int MIN_SECRET_BYTES = 32;

    /** Rate of fetches that a token with an unknown key ID may cause. */
    static final Duration JWKS_MIN_INTERVAL = Duration.ofSeconds(30);

    public JwtSettings {
        publish = List.copyOf(publish);
        subscribe = List.copyOf(subscribe);
    }

    /** Whether any key is configured: listing {@code jwt} without one is a configuration error. */
    public boolean hasKeys() {
        return hmacSecret != null || publicKeyFile != null || jwksUrl != null || jwksFile != null;
    }

    /** Settings with no key and no check configured (what an unconfigured node has). */
    public static JwtSettings none() {
        return new JwtSettings(null, null, null, Duration.ofMinutes(5), Duration.ofSeconds(5), JWKS_MIN_INTERVAL,
                null, Duration.ofSeconds(30), null, null, null, null, null, null, null, List.of(), List.of());
    }

    public static JwtSettings from(Settings s) {
        String secret = text(s, "auth.jwt.hmac-secret");
        if (secret != null && secret.getBytes(java.nio.charset.StandardCharsets.UTF_8).length < MIN_SECRET_BYTES) {
            // Never quote the secret.
            throw new ConfigException("setting " + s.describe("auth.jwt.hmac-secret") + " must be at least "
                    + MIN_SECRET_BYTES + " bytes long (HS256 needs a 256-bit key)");
        }
        return new JwtSettings(
                secret,
                readableFile(s, "auth.jwt.public-key-file"),
                url(s, "auth.jwt.jwks-url"),
                positive(s, "auth.jwt.jwks-refresh"),
                positive(s, "auth.jwt.jwks-timeout"),
                JWKS_MIN_INTERVAL,
                readableFile(s, "auth.jwt.jwks-file"),
                s.duration("auth.jwt.clock-skew"),
                text(s, "auth.jwt.issuer"),
                text(s, "auth.jwt.audience"),
                text(s, "auth.jwt.client-id-claim"),
                text(s, "auth.jwt.username-claim"),
                text(s, "auth.jwt.publish-claim"),
                text(s, "auth.jwt.subscribe-claim"),
                text(s, "auth.jwt.client-type-claim"),
                rules(s, "auth.jwt.publish"),
                rules(s, "auth.jwt.subscribe"));
    }

    private static String text(Settings s, String key) {
        String v = s.string(key);
        return v.isEmpty() ? null : v;
    }

    private static Duration positive(Settings s, String key) {
        Duration d = s.duration(key);
        if (d.isZero()) {
            throw s.invalid(key, s.string(key), "must be more than 0");
        }
        return d;
    }

    private static Path readableFile(Settings s, String key) {
        String raw = text(s, key);
        if (raw == null) {
            return null;
        }
        Path p = Path.of(raw);
        if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
            throw s.invalid(key, raw, "is not a readable file");
        }
        return p;
    }

    private static URI url(Settings s, String key) {
        String raw = text(s, key);
        if (raw == null) {
            return null;
        }
        try {
            URI uri = new URI(raw);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(java.util.Locale.ROOT);
            if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
                throw s.invalid(key, raw, "is not an http or https URL");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw s.invalid(key, raw, "is not a URL: " + e.getReason());
        }
    }

    /** Topic filters separated by commas, each a valid rule. */
    private static List<String> rules(Settings s, String key) {
        String raw = s.string(key);
        List<String> rules = new ArrayList<>();
        for (String part : raw.split(",")) {
            String rule = part.strip();
            if (rule.isEmpty()) {
                continue;
            }
            String problem = TopicRules.validate(rule);
            if (problem != null) {
                throw s.invalid(key, raw, problem);
            }
            rules.add(rule);
        }
        return rules;
    }

    @Override
    public String toString() {
        return "JwtSettings[hmacSecret=" + (hmacSecret == null ? "" : "***") + ", publicKeyFile=" + publicKeyFile
                + ", jwksUrl=" + jwksUrl + ", jwksRefresh=" + jwksRefresh + ", jwksTimeout=" + jwksTimeout
                + ", jwksFile=" + jwksFile + ", clockSkew=" + clockSkew + ", issuer=" + issuer + ", audience="
                + audience + ", clientIdClaim=" + clientIdClaim + ", usernameClaim=" + usernameClaim
                + ", publishClaim=" + publishClaim + ", subscribeClaim=" + subscribeClaim + ", clientTypeClaim="
                + clientTypeClaim + ", publish=" + publish + ", subscribe=" + subscribe + "]";
    }
}
