package io.fleetmq.app.security.jwt;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** {@link JwtSettings} for tests, starting from nothing configured. */
final class SettingsBuilder {

    String hmacSecret;
    Path publicKeyFile;
    URI jwksUrl;
    Duration jwksRefresh = Duration.ofHours(1);
    Duration jwksTimeout = Duration.ofSeconds(2);
    Duration jwksMinInterval = Duration.ofSeconds(30);
    Path jwksFile;
    Duration clockSkew = Duration.ofSeconds(30);
    String issuer;
    String audience;
    String clientIdClaim;
    String usernameClaim;
    String publishClaim;
    String subscribeClaim;
    String clientTypeClaim;
    List<String> publish = List.of();
    List<String> subscribe = List.of();

    JwtSettings build() {
        return new JwtSettings(hmacSecret, publicKeyFile, jwksUrl, jwksRefresh, jwksTimeout, jwksMinInterval, jwksFile,
                clockSkew, issuer, audience, clientIdClaim, usernameClaim, publishClaim, subscribeClaim,
                clientTypeClaim, publish, subscribe);
    }
}
