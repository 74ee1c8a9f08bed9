package io.fleetmq.app.security.x509;

import io.fleetmq.app.security.provider.AuthProvider;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.app.security.provider.AuthResult;
import io.fleetmq.app.security.provider.CommonNames;
import io.fleetmq.app.security.provider.Identity;
import io.fleetmq.core.security.Credential;
import io.fleetmq.persistence.security.Credentials;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client certificates ({@code x509}): a client whose TLS handshake verified a certificate chain is
 * let in by the {@code x509} credential whose common name equals (or whose pattern fully matches)
 * the subject CN of any certificate on that chain, its own or a CA's above it, so that one credential
 * naming an intermediate CA admits every device it signed. The most specific credential wins: an
 * exact match of the client's own certificate, then an exact match further up (nearest first), then
 * a pattern (same order). The client's identity carries the CN of its own certificate, for
 * {@code ${cn}} in rules, and ends when the first certificate of the chain expires.
 *
 * <p>No certificate, or a certificate that no credential names: not this provider's, so the next
 * provider (or the anonymous policy) decides; a certificate alone is no way in.
 */
public final class X509Provider implements AuthProvider {

    private static final Logger log = LoggerFactory.getLogger(X509Provider.class);

    private final Credentials credentials;
    private final X509Cache cache;
    /** Compiled patterns by their text: compiled once, whichever credential holds them. */
    private final Map<String, Optional<Pattern>> patterns = new ConcurrentHashMap<>();

    /** Whether PostgreSQL is known to be away now: then it is not asked (no wait for its connect timeout). */
    private final java.util.function.BooleanSupplier databaseAway;

    public X509Provider(Credentials credentials, Duration cacheTtl) {
        this(credentials, cacheTtl, () -> false);
    }

    public X509Provider(Credentials credentials, Duration cacheTtl, java.util.function.BooleanSupplier databaseAway) {
        this.credentials = credentials;
        this.cache = new X509Cache(cacheTtl, System::nanoTime);
        this.databaseAway = databaseAway;
    }

    @Override
    public String name() {
        return "x509";
    }

    @Override
    public AuthResult quick(AuthRequest r) {
        if (r.certificates().isEmpty()) {
            return AuthResult.NOT_MINE;
        }
        X509Cache.Match known = cache.get(r.certificates().get(0));
        if (known == null) {
            return null;
        }
        return known.credential() == null ? AuthResult.NOT_MINE : allowed(known.credential(), r);
    }

    @Override
    public AuthResult authenticate(AuthRequest r) {
        if (r.certificates().isEmpty()) {
            return AuthResult.NOT_MINE;
        }
        X509Certificate leaf = r.certificates().get(0);
        X509Cache.Match known = cache.get(leaf);
        Credential match;
        if (known != null) {
            match = known.credential();
        } else {
            List<String> names = commonNames(r.certificates());
            if (databaseAway.getAsBoolean()) {
                return AuthResult.unavailable();
            }
            try {
                match = best(names, credentials.x509Candidates(new LinkedHashSet<>(names))).orElse(null);
            } catch (RuntimeException e) {
                log.debug("{}: x509 credentials unavailable: {}", r.clientId(), e.getMessage());
                return AuthResult.unavailable();
            }
            cache.put(leaf, match);
        }
        return match == null ? AuthResult.NOT_MINE : allowed(match, r);
    }

    /** The subject CN of each certificate of the chain, leaf first; null where one has none. */
    static List<String> commonNames(List<X509Certificate> chain) {
        List<String> names = new ArrayList<>(chain.size());
        for (X509Certificate c : chain) {
            names.add(CommonNames.of(c));
        }
        return names;
    }

    /**
     * The most specific credential for a chain whose CNs are {@code names} (leaf first): exact before
     * pattern, then nearer the leaf; ties (patterns matching the same certificate) go to the oldest.
     */
    Optional<Credential> best(List<String> names, List<Credential> candidates) {
        record Ranked(Credential credential, int kind, int depth) {
        }
        List<Ranked> ranked = new ArrayList<>();
        for (Credential c : candidates) {
            if (!Credential.X509.equals(c.type()) || c.certCommonName() == null) {
                continue;
            }
            for (int depth = 0; depth < names.size(); depth++) {
                String cn = names.get(depth);
                if (cn != null && matches(c, cn)) {
                    ranked.add(new Ranked(c, c.certCommonNameRegex() ? 1 : 0, depth));
                    break;
                }
            }
        }
        return ranked.stream()
                .min(Comparator.comparingInt(Ranked::kind).thenComparingInt(Ranked::depth)
                        .thenComparing(x -> x.credential().createdAt(), Comparator.nullsLast(Comparator.naturalOrder()))
                        .thenComparing(x -> x.credential().id()))
                .map(Ranked::credential);
    }

    private boolean matches(Credential c, String cn) {
        if (!c.certCommonNameRegex()) {
            return c.certCommonName().equals(cn);
        }
        Optional<Pattern> p = patterns.computeIfAbsent(c.certCommonName(), X509Provider::compile);
        return p.isPresent() && p.get().matcher(cn).matches();
    }

    private static Optional<Pattern> compile(String regex) {
        try {
            return Optional.of(Pattern.compile(regex));
        } catch (PatternSyntaxException e) {
            // The API refuses such a pattern; one written to PostgreSQL by hand matches nothing.
            log.warn("x509 credential pattern '{}' is invalid and matches nothing: {}", regex, e.getDescription());
            return Optional.empty();
        }
    }

    private static AuthResult allowed(Credential c, AuthRequest r) {
        return new AuthResult.Allowed(new Identity("x509", c.id(), r.username(), r.commonName(), c.clientType(),
                c.publish(), c.subscribe(), expiry(r.certificates())));
    }

    /** When the first certificate of the chain stops being valid: the client's authentication ends then. */
    static Instant expiry(List<X509Certificate> chain) {
        Instant first = null;
        for (X509Certificate c : chain) {
            Instant notAfter = c.getNotAfter().toInstant();
            if (first == null || notAfter.isBefore(first)) {
                first = notAfter;
            }
        }
        return first;
    }

    @Override
    public void credentialsChanged() {
        cache.clear();
        if (patterns.size() > 10_000) {
            patterns.clear(); // patterns of deleted credentials would otherwise pile up
        }
    }
}
