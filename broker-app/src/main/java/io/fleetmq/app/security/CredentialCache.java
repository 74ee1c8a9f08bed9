package io.fleetmq.app.security;

import io.fleetmq.core.security.Credential;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Recent answers, reused for a short time so that reconnecting fleets do not cost a PostgreSQL read
 * and a password hash per CONNECT: the credentials read for a (user name, client ID), and successful
 * password checks. A check is remembered as an HMAC of the password under a key that lives only in
 * this node's memory, bound to the stored hash, never the password itself. Dropped whole on any
 * change of a credential.
 */
final class CredentialCache {

    /** Entries of each kind; beyond, the kind is emptied (a crude bound that a storm cannot grow past). */
    static final int MAX_ENTRIES = 100_000;

    private record Candidates(List<Credential> credentials, long until) {
    }

    private record Pair(String username, String clientId) {
    }

    private final long ttlNanos;
    private final LongSupplier nanoClock;
    private final byte[] key = new byte[32];
    private final Map<Pair, Candidates> candidates = new ConcurrentHashMap<>();
    private final Map<String, Long> verified = new ConcurrentHashMap<>();
    private volatile long lastSweep;
    /**
     * One instance of each credential read: a fleet sharing a credential (one user name, many client
     * IDs) holds one copy of it and its rules in the cache, not one per device.
     */
    private final Map<Credential, Credential> shared = new ConcurrentHashMap<>();

    CredentialCache(java.time.Duration ttl, LongSupplier nanoClock) {
        this.ttlNanos = ttl.toNanos();
        this.nanoClock = nanoClock;
        this.lastSweep = nanoClock.getAsLong();
        new SecureRandom().nextBytes(key);
    }

    /** The credentials read for this pair within the TTL, or null. */
    List<Credential> candidates(String username, String clientId) {
        Candidates c = candidates.get(new Pair(username, clientId));
        return c != null && c.until() - nanoClock.getAsLong() > 0 ? c.credentials() : null;
    }

    void putCandidates(String username, String clientId, List<Credential> read) {
        if (ttlNanos <= 0) {
            return;
        }
        sweep();
        if (candidates.size() >= MAX_ENTRIES) {
            candidates.clear();
            shared.clear();
        }
        List<Credential> one = new java.util.ArrayList<>(read.size());
        for (Credential c : read) {
            Credential known = shared.putIfAbsent(c, c);
            one.add(known == null ? c : known);
        }
        candidates.put(new Pair(username, clientId), new Candidates(List.copyOf(one), nanoClock.getAsLong() + ttlNanos));
    }

    /** Whether {@code password} matched {@code c}'s current hash within the TTL. */
    boolean verified(Credential c, byte[] password) {
        Long until = verified.get(checkKey(c, password));
        return until != null && until - nanoClock.getAsLong() > 0;
    }

    void putVerified(Credential c, byte[] password) {
        if (ttlNanos <= 0) {
            return;
        }
        sweep();
        if (verified.size() >= MAX_ENTRIES) {
            verified.clear();
        }
        verified.put(checkKey(c, password), nanoClock.getAsLong() + ttlNanos);
    }

    /**
     * A credential changed: forgets what was read with it, and what it may match now (its current
     * user name and client ID, null if it is gone), and the password checks made against it.
     */
    void forget(String credentialId, String username, String clientId) {
        candidates.entrySet().removeIf(e -> username != null && username.equals(e.getKey().username())
                || clientId != null && clientId.equals(e.getKey().clientId())
                || e.getValue().credentials().stream().anyMatch(c -> c.id().equals(credentialId)));
        String prefix = credentialId + ":";
        verified.keySet().removeIf(k -> k.startsWith(prefix));
        shared.keySet().removeIf(c -> c.id().equals(credentialId));
    }

    /**
     * At most once per TTL, drops the entries that expired: a fleet that connected once and stays
     * connected does not keep its entries (about 150 bytes per client) until the bound empties them.
     */
    private void sweep() {
        long now = nanoClock.getAsLong();
        if (now - lastSweep < ttlNanos) {
            return;
        }
        lastSweep = now; // racing threads may both sweep; that is harmless
        candidates.values().removeIf(c -> c.until() - now <= 0);
        verified.values().removeIf(until -> until - now <= 0);
    }

    int size() {
        return candidates.size() + verified.size();
    }

    void clear() {
        candidates.clear();
        verified.clear();
        shared.clear();
    }


    private String checkKey(Credential c, byte[] password) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(c.passwordHash().getBytes(StandardCharsets.UTF_8));
            mac.update((byte) 0);
            byte[] digest = mac.doFinal(password);
            String k = c.id() + ":" + Base64.getEncoder().encodeToString(digest);
            Arrays.fill(digest, (byte) 0);
            return k;
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
