package io.fleetmq.app.security.jwt;

import com.nimbusds.jose.JWSObject;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.JWTClaimsSet;
import io.fleetmq.app.config.ConfigException;
import io.fleetmq.app.security.provider.AuthProvider;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.app.security.provider.AuthResult;
import io.fleetmq.app.security.provider.Identity;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.log.LogLimit;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JSON Web Tokens in the CONNECT password ({@code jwt}); the user name is optional. A password
 * shaped like a compact JWS (three Base64url parts whose first is a JSON header naming an
 * {@code alg}) is this provider's: it is let in when its signature verifies with a configured key of
 * its algorithm and its claims pass ({@link TokenClaims}), refused with 0x86 otherwise, and answered
 * 0x88 when the key it needs is published at a JWK set URL that cannot be reached. Any other
 * password, or none, is for the next provider.
 */
public final class JwtProvider implements AuthProvider {

    private static final Logger log = LoggerFactory.getLogger(JwtProvider.class);

    /** Shared by every client: a storm of failures costs a few lines, see {@link LogLimit}. */
    private static final LogLimit LOG_LIMIT = new LogLimit(20, java.time.Duration.ofSeconds(10));

    private static final Pattern COMPACT = Pattern.compile("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*");
    /** Tokens are far smaller; a longer password is not worth parsing as one. */
    private static final int MAX_TOKEN_CHARS = 16 * 1024;

    private final TokenKeys keys;
    private final TokenClaims claims;

    JwtProvider(TokenKeys keys, TokenClaims claims) {
        this.keys = keys;
        this.claims = claims;
    }

    /**
     * Reads the configured keys and starts fetching the JWK set, if a URL is configured.
     *
     * @throws ConfigException naming the settings when no key is configured, or a key file is unusable
     */
    public static JwtProvider create(JwtSettings settings, Clock clock) {
        if (!settings.hasKeys()) {
            throw new ConfigException("auth.providers (AUTH_PROVIDERS) lists jwt, but no key to verify tokens is"
                    + " configured: set " + JwtSettings.HMAC_SECRET + ", " + JwtSettings.PUBLIC_KEY_FILE + ", "
                    + JwtSettings.JWKS_URL + " or " + JwtSettings.JWKS_FILE);
        }
        List<JWK> fixed = new ArrayList<>();
        if (settings.publicKeyFile() != null) {
            fixed.addAll(KeyFiles.pem(settings.publicKeyFile(), JwtSettings.PUBLIC_KEY_FILE));
        }
        if (settings.jwksFile() != null) {
            fixed.addAll(KeyFiles.jwks(settings.jwksFile(), JwtSettings.JWKS_FILE));
        }
        JwksEndpoint endpoint = settings.jwksUrl() == null ? null
                : new JwksEndpoint(settings.jwksUrl(), settings.jwksTimeout(), settings.jwksRefresh(),
                        settings.jwksMinInterval(), System::nanoTime);
        return new JwtProvider(new TokenKeys(settings.hmacSecret(), fixed, endpoint), new TokenClaims(settings, clock));
    }

    @Override
    public String name() {
        return "jwt";
    }

    /** Whether the password is a token is known at once; checking one waits for an auth thread. */
    @Override
    public AuthResult quick(AuthRequest request) {
        return token(request.password()) == null ? AuthResult.NOT_MINE : null;
    }

    @Override
    public AuthResult authenticate(AuthRequest request) {
        String token = token(request.password());
        if (token == null) {
            return AuthResult.NOT_MINE;
        }
        try {
            JWSObject jws;
            try {
                jws = JWSObject.parse(token); // refuses alg "none": no JWS algorithm
            } catch (ParseException e) {
                return refused(request, "not a signed token: " + e.getMessage());
            }
            switch (keys.check(jws)) {
                case UNAVAILABLE -> {
                    log.debug("{}: the key of its token cannot be fetched now", request.clientId());
                    return AuthResult.unavailable();
                }
                case FAILED -> {
                    return refused(request, "signature not verified (" + jws.getHeader().getAlgorithm() + ", kid "
                            + jws.getHeader().getKeyID() + ")");
                }
                case VERIFIED -> { }
            }
            JWTClaimsSet set;
            try {
                set = JWTClaimsSet.parse(jws.getPayload().toJSONObject());
            } catch (ParseException | RuntimeException e) {
                return refused(request, "claims are not a JSON object of claims");
            }
            if (set == null) {
                return refused(request, "claims are not a JSON object");
            }
            Identity identity = claims.identity(set, request);
            return new AuthResult.Allowed(identity);
        } catch (TokenClaims.Refused e) {
            return refused(request, e.getMessage());
        } catch (RuntimeException e) {
            if (LOG_LIMIT.allow()) {
                log.warn("{}: checking its token failed: {}{}",
                        ClientText.of(request.clientId()), e.toString(), LOG_LIMIT.suppressedNote());
            }
            return AuthResult.unavailable();
        }
    }

    private static AuthResult refused(AuthRequest request, String why) {
        log.debug("{}: token refused: {}", request.clientId(), why);
        return AuthResult.badCredentials();
    }

    /**
     * The password as a compact JWS, or null when it is not one: three Base64url parts, the first a
     * JSON object with an {@code alg}. (A token with {@code alg: none} is one, and refused.)
     */
    static String token(byte[] password) {
        if (password == null || password.length < 5 || password.length > MAX_TOKEN_CHARS) {
            return null;
        }
        String text = new String(password, StandardCharsets.US_ASCII);
        if (!COMPACT.matcher(text).matches()) {
            return null;
        }
        try {
            String header = new Base64URL(text.substring(0, text.indexOf('.'))).decodeToString();
            Map<String, Object> json = JSONObjectUtils.parse(header);
            return json.get("alg") instanceof String ? text : null;
        } catch (ParseException | RuntimeException e) {
            return null;
        }
    }

    @Override
    public void close() {
        keys.close();
    }
}
