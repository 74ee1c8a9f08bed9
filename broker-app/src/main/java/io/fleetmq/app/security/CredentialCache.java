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
 * this node's memory, bound to the stored hash, never the password itself.
 *
 * <p>A change of a credential makes stale what was read with it, and what its user name and client ID
 * may match now. Rather than search every entry for those (an import of 50,000 credentials would
 * search a cache of 50,000 clients 50,000 times), a change is marked on its credential, user name
 * and client ID with the {@link #generation} it happened at, and an entry read before a mark on
 * anything it concerns is not used. A password check needs no mark: it is bound to the stored hash,
 * which a new password replaces.
 */
final class CredentialCache {

    /** Entries of each kind; beyond, the kind is emptied (a crude bound that a storm cannot grow past). */
    static final int MAX_ENTRIES = 100_000;

    /** What was read, until when it may be used, and the {@link #generation} its read began at. */
    private record Candidates(List<Credential> credentials, long until, long readAt) {
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
     * One instance of each credential read, by ID: a fleet sharing a credential (one user name, many
     * client IDs) holds one copy of it and its rules in the cache, not one per device.
     */
    private final Map<String, Credential> shared = new ConcurrentHashMap<>();
    /**
     * Moves on with every change that may make what was read stale ({@link #forget}, {@link #clear},
     * {@link #credentialsWithoutUsername}): a read that began before a change to what it concerns is
     * not kept after it, nor used.
     */
    private final java.util.concurrent.atomic.AtomicLong generation = new java.util.concurrent.atomic.AtomicLong();
    /** The generation of the last change of each credential, user name and client ID, kept for two sweeps. */
    private final Map<String, Long> changedCredentials = new ConcurrentHashMap<>();
    private final Map<String, Long> changedUsernames = new ConcurrentHashMap<>();
    private final Map<String, Long> changedClientIds = new ConcurrentHashMap<>();
    /** Reads that began before these generations are stale whatever they concern: everything, user names' lists. */
    private volatile long clearedAt;
    private volatile long listsClearedAt;
    /** The generation at the last two sweeps: marks older than the earlier one concern no live entry. */
    private long sweptAt;
    private long sweptBefore;

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
        Pair pair = new Pair(username, clientId);
        Candidates c = candidates.get(pair);
        if (c != null && c.until() - now > 0) {
            if (!stale(c.readAt(), username, clientId, c.credentials())) {
                return c.credentials();
            }
            candidates.remove(pair, c);
        }
        if (username == null || !usernameLists) {
            return null;
        }
        Candidates all = byUsername.get(username);
        if (all == null || all.credentials() == null || all.until() - now <= 0) {
            return null;
        }
        if (all.readAt() < listsClearedAt || stale(all.readAt(), username, null, all.credentials())) {
            byUsername.remove(username, all);
            return null;
        }
        return matching(all.credentials(), clientId);
    }

    /**
     * Whether a read that began at generation {@code readAt} is older than a change of what it
     * concerns: its user name, its client ID, a credential it holds, or everything.
     */
    private boolean stale(long readAt, String username, String clientId, List<Credential> read) {
        if (readAt < clearedAt || changedSince(changedUsernames, username, readAt)
                || changedSince(changedClientIds, clientId, readAt)) {
            return true;
        }
        if (read != null && !changedCredentials.isEmpty()) {
            for (Credential c : read) {
                if (changedSince(changedCredentials, c.id(), readAt)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean changedSince(Map<String, Long> marks, String key, long readAt) {
        if (key == null) {
            return false;
        }
        Long at = marks.get(key);
        return at != null && at > readAt;
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
        if (exist || !was) {
            // Not in use, or lists put while they were not may be stale; so may those being read.
            listsClearedAt = generation.incrementAndGet();
            byUsername.clear();
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
        if (ttlNanos <= 0 || !usernameLists || readAt < listsClearedAt || stale(readAt, username, null, all)) {
            return;
        }
        sweep();
        if (byUsername.size() >= MAX_ENTRIES) {
            byUsername.clear();
        }
        Candidates entry = new Candidates(all == null ? null : shared(all), nanoClock.getAsLong() + ttlNanos, readAt);
        byUsername.put(username, entry);
        if (readAt < listsClearedAt || stale(readAt, username, null, all)) {
            byUsername.remove(username, entry); // a change came while it was put
        }
    }

    void putCandidates(String username, String clientId, List<Credential> read) {
        putCandidates(username, clientId, read, generation());
    }

    /** {@link #putCandidates(String, String, List)} of a read that began at {@code readAt}. */
    void putCandidates(String username, String clientId, List<Credential> read, long readAt) {
        if (ttlNanos <= 0 || stale(readAt, username, clientId, read)) {
            return;
        }
        sweep();
        if (candidates.size() >= MAX_ENTRIES) {
            candidates.clear();
            shared.clear();
        }
        Pair key = new Pair(username, clientId);
        Candidates entry = new Candidates(shared(read), nanoClock.getAsLong() + ttlNanos, readAt);
        candidates.put(key, entry);
        if (stale(readAt, username, clientId, read)) {
            candidates.remove(key, entry); // a change came while it was put
        }
    }

    /** {@code read} with each credential replaced by the one copy of it the cache holds. */
    private List<Credential> shared(List<Credential> read) {
        List<Credential> one = new java.util.ArrayList<>(read.size());
        for (Credential c : read) {
            Credential known = shared.get(c.id());
            if (c.equals(known)) {
                one.add(known);
            } else {
                shared.put(c.id(), c); // the first read of it, or a newer version
                one.add(c);
            }
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
     * A credential changed: what was read with it, and what it may match now (its current user name
     * and client ID, null if it is gone), is stale from now on, and so are the reads of them under
     * way. The password checks made against it need not be: a new password comes with a new hash.
     */
    void forget(String credentialId, String username, String clientId) {
        if (ttlNanos <= 0) {
            return; // nothing is kept
        }
        if (changedCredentials.size() + changedUsernames.size() + changedClientIds.size() >= MAX_ENTRIES) {
            clear(); // more changes within two TTLs than the bound: forget everything instead
            return;
        }
        long at = generation.incrementAndGet();
        changedCredentials.put(credentialId, at);
        if (username != null) {
            changedUsernames.put(username, at);
        }
        if (clientId != null) {
            changedClientIds.put(clientId, at);
        }
        shared.remove(credentialId);
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
        sweepNow(now);
    }

    private synchronized void sweepNow(long now) {
        if (now - lastSweep < ttlNanos) {
            return; // another thread swept meanwhile
        }
        lastSweep = now;
        candidates.values().removeIf(c -> c.until() - now <= 0);
        byUsername.values().removeIf(c -> c.until() - now <= 0);
        verified.values().removeIf(until -> until - now <= 0);
        // A live entry was put less than a TTL ago, and sweeps are a TTL apart at least: unless its
        // read took longer than a TTL, it began after the sweep before the last one, so marks made
        // before that sweep are older than every live entry's read and make none of them stale.
        long older = sweptBefore;
        changedCredentials.values().removeIf(at -> at <= older);
        changedUsernames.values().removeIf(at -> at <= older);
        changedClientIds.values().removeIf(at -> at <= older);
        sweptBefore = sweptAt;
        sweptAt = generation.get();
    }

    /** The changes marked and still kept. */
    int changesKept() {
        return changedCredentials.size() + changedUsernames.size() + changedClientIds.size();
    }

    int size() {
        return candidates.size() + byUsername.size() + verified.size();
    }

    void clear() {
        clearedAt = generation.incrementAndGet();
        candidates.clear();
        byUsername.clear();
        verified.clear();
        shared.clear();
        changedCredentials.clear();
        changedUsernames.clear();
        changedClientIds.clear();
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
