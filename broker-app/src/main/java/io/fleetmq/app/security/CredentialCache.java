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
    /**
     * Every credential of a user name, read once for all its client IDs (null credentials: it has
     * more than {@link #USERNAME_LIST_MAX}, so its pairs are read one by one). Used only while
     * {@link #usernameLists} holds.
     */
    private final Map<String, Candidates> byUsername = new ConcurrentHashMap<>();
    /** Whether no credential matches by client ID alone, so a user name's list is complete. */
    private volatile boolean usernameLists;
    private final Map<String, Long> verified = new ConcurrentHashMap<>();
    private volatile long lastSweep;
    /**
     * One instance of each credential read: a fleet sharing a credential (one user name, many client
     * IDs) holds one copy of it and its rules in the cache, not one per device.
     */
    private final Map<Credential, Credential> shared = new ConcurrentHashMap<>();
    /**
     * Moves on with every change that may make what was read stale ({@link #forget}, {@link #clear},
     * {@link #credentialsWithoutUsername}): a read that began before a change is not kept after it.
     */
    private final java.util.concurrent.atomic.AtomicLong generation = new java.util.concurrent.atomic.AtomicLong();

    CredentialCache(java.time.Duration ttl, LongSupplier nanoClock) {
        this.ttlNanos = ttl.toNanos();
        this.nanoClock = nanoClock;
        this.lastSweep = nanoClock.getAsLong();
        new SecureRandom().nextBytes(key);
    }

    /** Credentials one user name may have and still be read as one list for all its client IDs. */
    static final int USERNAME_LIST_MAX = 64;

    /**
     * The credentials read for this pair within the TTL, or those of the user name's list that match
     * the client ID (naming it first, then naming none), or null.
     */
    List<Credential> candidates(String username, String clientId) {
        long now = nanoClock.getAsLong();
        Candidates c = candidates.get(new Pair(username, clientId));
        if (c != null && c.until() - now > 0) {
            return c.credentials();
        }
        if (username == null || !usernameLists) {
            return null;
        }
        Candidates all = byUsername.get(username);
        if (all == null || all.credentials() == null || all.until() - now <= 0) {
            return null;
        }
        return matching(all.credentials(), clientId);
    }

    /**
     * Of a user name's credentials (those naming a client ID first), those that {@code clientId}
     * matches: naming it, or naming none.
     */
    static List<Credential> matching(List<Credential> all, String clientId) {
        boolean anyNamed = false;
        for (Credential c : all) {
            anyNamed |= c.clientId() != null;
        }
        if (!anyNamed) {
            return all; // the common case, a fleet's shared credential: nothing to filter
        }
        List<Credential> out = new java.util.ArrayList<>(all.size());
        for (Credential c : all) {
            if (c.clientId() == null || c.clientId().equals(clientId)) {
                out.add(c);
            }
        }
        return out;
    }

    /** Whether anything read is kept (a TTL above 0). */
    boolean enabled() {
        return ttlNanos > 0;
    }

    /** Taken before a read: the read is kept only if nothing changed in between. */
    long generation() {
        return generation.get();
    }

    /** Whether user names' lists may be read and used (no credential matches by client ID alone). */
    boolean usernameLists() {
        return usernameLists;
    }

    /** Whether a credential matching by client ID alone exists: while one does, only pairs are used. */
    void credentialsWithoutUsername(boolean exist) {
        boolean was = usernameLists;
        usernameLists = !exist;
        generation.incrementAndGet();
        if (exist || !was) {
            byUsername.clear(); // not in use, or lists put while they were not may be stale
        }
    }

    /** Whether the user name's list is known to be too long to read at once (within the TTL). */
    boolean tooManyFor(String username) {
        Candidates all = byUsername.get(username);
        return all != null && all.credentials() == null && all.until() - nanoClock.getAsLong() > 0;
    }

    /**
     * Keeps every credential of {@code username} as read (those naming a client ID first), or, with
     * {@code all} null, that it has too many for one list.
     */
    void putUsername(String username, List<Credential> all) {
        putUsername(username, all, generation());
    }

    /** {@link #putUsername(String, List)} of a read that began at {@code readAt} ({@link #generation}). */
    void putUsername(String username, List<Credential> all, long readAt) {
        if (ttlNanos <= 0 || !usernameLists || readAt != generation.get()) {
            return;
        }
        sweep();
        if (byUsername.size() >= MAX_ENTRIES) {
            byUsername.clear();
        }
        Candidates entry = new Candidates(all == null ? null : shared(all), nanoClock.getAsLong() + ttlNanos);
        byUsername.put(username, entry);
        if (readAt != generation.get()) {
            byUsername.remove(username, entry); // a change came while it was put
        }
    }

    void putCandidates(String username, String clientId, List<Credential> read) {
        putCandidates(username, clientId, read, generation());
    }

    /** {@link #putCandidates(String, String, List)} of a read that began at {@code readAt}. */
    void putCandidates(String username, String clientId, List<Credential> read, long readAt) {
        if (ttlNanos <= 0 || readAt != generation.get()) {
            return;
        }
        sweep();
        if (candidates.size() >= MAX_ENTRIES) {
            candidates.clear();
            shared.clear();
        }
        Pair key = new Pair(username, clientId);
        Candidates entry = new Candidates(shared(read), nanoClock.getAsLong() + ttlNanos);
        candidates.put(key, entry);
        if (readAt != generation.get()) {
            candidates.remove(key, entry);
        }
    }

    /** {@code read} with each credential replaced by the one copy of it the cache holds. */
    private List<Credential> shared(List<Credential> read) {
        List<Credential> one = new java.util.ArrayList<>(read.size());
        for (Credential c : read) {
            Credential known = shared.putIfAbsent(c, c);
            one.add(known == null ? c : known);
        }
        return List.copyOf(one);
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
        generation.incrementAndGet();
        candidates.entrySet().removeIf(e -> username != null && username.equals(e.getKey().username())
                || clientId != null && clientId.equals(e.getKey().clientId())
                || e.getValue().credentials().stream().anyMatch(c -> c.id().equals(credentialId)));
        byUsername.entrySet().removeIf(e -> e.getKey().equals(username) || e.getValue().credentials() != null
                && e.getValue().credentials().stream().anyMatch(c -> c.id().equals(credentialId)));
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
        byUsername.values().removeIf(c -> c.until() - now <= 0);
        verified.values().removeIf(until -> until - now <= 0);
    }

    int size() {
        return candidates.size() + byUsername.size() + verified.size();
    }

    void clear() {
        generation.incrementAndGet();
        candidates.clear();
        byUsername.clear();
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
