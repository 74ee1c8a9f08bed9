package io.fleetmq.app.security.jwt;

import com.nimbusds.jwt.JWTClaimsSet;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.app.security.provider.Identity;
import io.fleetmq.core.security.TopicRules;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;

/**
 * The checks a verified token's claims must pass, and the identity they give: expiry (required),
 * not-before, issuer, audience, the claims that must name this client, and rules and client type
 * from claims where configured.
 */
final class TokenClaims {

    /** A token refused, with why (for the node's debug log; never the token). */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String why) {
            super(why, null, false, false);
        }
    }

    private final JwtSettings settings;
    private final Clock clock;

    TokenClaims(JwtSettings settings, Clock clock) {
        this.settings = settings;
        this.clock = clock;
    }

    Identity identity(JWTClaimsSet claims, AuthRequest request) throws Refused {
        Instant now = clock.instant();
        Date exp = claims.getExpirationTime();
        if (exp == null) {
            throw new Refused("no exp claim: a token without an expiry is never accepted");
        }
        if (now.isAfter(exp.toInstant().plus(settings.clockSkew()))) {
            throw new Refused("expired at " + exp.toInstant());
        }
        Date nbf = claims.getNotBeforeTime();
        if (nbf != null && now.plus(settings.clockSkew()).isBefore(nbf.toInstant())) {
            throw new Refused("not valid before " + nbf.toInstant());
        }
        if (settings.issuer() != null && !settings.issuer().equals(claims.getIssuer())) {
            throw new Refused("issuer '" + claims.getIssuer() + "' is not " + settings.issuer());
        }
        if (settings.audience() != null
                && (claims.getAudience() == null || !claims.getAudience().contains(settings.audience()))) {
            throw new Refused("audience " + claims.getAudience() + " does not contain " + settings.audience());
        }
        if (settings.clientIdClaim() != null
                && !request.clientId().equals(string(claims, settings.clientIdClaim()))) {
            throw new Refused("claim " + settings.clientIdClaim() + " is not the client ID");
        }
        String username = request.username();
        if (settings.usernameClaim() != null) {
            String claimed = string(claims, settings.usernameClaim());
            if (username == null) {
                username = claimed; // the token names the user: rules with ${username} use it
            } else if (!username.equals(claimed)) {
                throw new Refused("claim " + settings.usernameClaim() + " is not the user name");
            }
        }
        List<String> publish = rules(claims, settings.publishClaim(), settings.publish());
        List<String> subscribe = rules(claims, settings.subscribeClaim(), settings.subscribe());
        // The client stays as long as a CONNECT with the token would be accepted: a token accepted
        // within the skew is not disconnected the moment it is let in.
        return new Identity("jwt", null, username, request.commonName(), clientType(claims), publish, subscribe,
                exp.toInstant().plus(settings.clockSkew()));
    }

    /** A claim's value when it is a string; else null (so it equals no client ID or user name). */
    private static String string(JWTClaimsSet claims, String name) {
        Object v = claims.getClaim(name);
        return v instanceof String s ? s : null;
    }

    private static List<String> rules(JWTClaimsSet claims, String claim, List<String> defaults) throws Refused {
        if (claim == null || claims.getClaim(claim) == null) {
            return defaults;
        }
        if (!(claims.getClaim(claim) instanceof List<?> values)) {
            throw new Refused("claim " + claim + " is not an array of topic filters");
        }
        List<String> rules = new ArrayList<>(values.size());
        for (Object v : values) {
            String problem = v instanceof String s ? TopicRules.validate(s) : "an element is not a string";
            if (problem != null) {
                // A token whose issuer meant rules we cannot read gets none, rather than more or fewer than meant.
                throw new Refused("claim " + claim + ": " + problem);
            }
            rules.add((String) v);
        }
        return rules;
    }

    private String clientType(JWTClaimsSet claims) throws Refused {
        String claim = settings.clientTypeClaim();
        if (claim == null || claims.getClaim(claim) == null) {
            return null;
        }
        String type = claims.getClaim(claim) instanceof String s ? s.toUpperCase(Locale.ROOT) : "";
        if (!type.equals("DEVICE") && !type.equals("APPLICATION")) {
            throw new Refused("claim " + claim + " is not DEVICE or APPLICATION");
        }
        return type;
    }
}
