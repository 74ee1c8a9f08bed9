package io.fleetmq.app.security.http;

import io.fleetmq.app.security.provider.AuthResult;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Allow and deny answers of the service, reused for a short time for an identical CONNECT, so that a
 * reconnecting fleet does not cost a request per client. An entry is keyed by an HMAC of the whole
 * request body (client ID, user name, password, address, CN, protocol, TLS) under a key that exists
 * only in this node's memory: the password is never kept, and a different password never matches.
 */
final class AnswerCache {

    /** Beyond this many entries, expired ones go, and if that is not enough, all of them. */
    static final int MAX_ENTRIES = 100_000;

    private record Entry(AuthResult result, long untilNanos) {
    }

    private final long ttlNanos;
    private final LongSupplier nanoClock;
    private final Clock clock;
    private final SecretKeySpec key;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();

    AnswerCache(Duration ttl, LongSupplier nanoClock, Clock clock) {
        this.ttlNanos = ttl.toNanos();
        this.nanoClock = nanoClock;
        this.clock = clock;
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        this.key = new SecretKeySpec(secret, "HmacSHA256");
    }

    boolean enabled() {
        return ttlNanos > 0;
    }

    /** The key of a request body: an HMAC, never the body itself. */
    String key(byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return Base64.getEncoder().encodeToString(mac.doFinal(body));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** The answer remembered for {@code key}, or null. */
    AuthResult get(String key) {
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        if (e.untilNanos() - nanoClock.getAsLong() <= 0 || expired(e.result())) {
            entries.remove(key, e);
            return null;
        }
        return e.result();
    }

    /** Remembers an allow or deny; an allow no longer than its identity lasts. */
    void put(String key, AuthResult result) {
        if (!enabled() || result instanceof AuthResult.NotMine || expired(result)) {
            return;
        }
        if (entries.size() >= MAX_ENTRIES) {
            long now = nanoClock.getAsLong();
            entries.values().removeIf(e -> e.untilNanos() - now <= 0);
            if (entries.size() >= MAX_ENTRIES) {
                entries.clear(); // a storm of distinct CONNECTs: a crude bound it cannot grow past
            }
        }
        entries.put(key, new Entry(result, nanoClock.getAsLong() + ttlNanos));
    }

    int size() {
        return entries.size();
    }

    private boolean expired(AuthResult result) {
        if (result instanceof AuthResult.Allowed a && a.identity().expiresAt() != null) {
            Instant expiresAt = a.identity().expiresAt();
            return !expiresAt.isAfter(clock.instant());
        }
        return false;
    }
}
