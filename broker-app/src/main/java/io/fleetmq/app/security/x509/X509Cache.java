package io.fleetmq.app.security.x509;

import io.fleetmq.core.security.Credential;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Which x509 credential matched a certificate recently (or that none did), by the certificate's
 * SHA-256 fingerprint, so that a fleet reconnecting does not cost a PostgreSQL read per CONNECT.
 * The names above a certificate are fixed by the issuer it names and whose signature it carries,
 * so the fingerprint of the client's own certificate stands for its chain. Dropped whole on any change of a credential:
 * a new pattern or a renamed CA can change what any certificate matches.
 */
final class X509Cache {

    /** Entries; beyond, the cache is emptied (a crude bound that a storm cannot grow past). */
    static final int MAX_ENTRIES = 100_000;

    /** The answer remembered: the credential, or null for none. */
    record Match(Credential credential, long until) {
    }

    private final long ttlNanos;
    private final LongSupplier nanoClock;
    private final Map<String, Match> matches = new ConcurrentHashMap<>();

    X509Cache(Duration ttl, LongSupplier nanoClock) {
        this.ttlNanos = ttl.toNanos();
        this.nanoClock = nanoClock;
    }

    /** What {@code leaf} matched within the TTL, or null when unknown. */
    Match get(X509Certificate leaf) {
        if (ttlNanos <= 0) {
            return null;
        }
        Match m = matches.get(fingerprint(leaf));
        return m != null && m.until() - nanoClock.getAsLong() > 0 ? m : null;
    }

    void put(X509Certificate leaf, Credential matched) {
        if (ttlNanos <= 0) {
            return;
        }
        if (matches.size() >= MAX_ENTRIES) {
            matches.clear();
        }
        matches.put(fingerprint(leaf), new Match(matched, nanoClock.getAsLong() + ttlNanos));
    }

    void clear() {
        matches.clear();
    }

    static String fingerprint(X509Certificate c) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(c.getEncoded()));
        } catch (NoSuchAlgorithmException | CertificateEncodingException e) {
            throw new IllegalStateException("cannot fingerprint a certificate: " + e.getMessage(), e);
        }
    }
}
