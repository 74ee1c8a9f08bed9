package io.fleetmq.app.security;

import io.fleetmq.app.security.provider.AuthProvider;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.app.security.provider.AuthResult;
import io.fleetmq.app.security.provider.Identity;
import io.fleetmq.core.security.Credential;
import io.fleetmq.persistence.auth.PasswordHashes;
import io.fleetmq.persistence.security.Credentials;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * User name / client ID / password credentials in PostgreSQL ({@code basic}). A credential matches
 * by user name, by client ID or by both; the most specific is tried first; its password, when it has
 * one, must be given. No credential for the CONNECT: not this provider's.
 */
final class BasicProvider implements AuthProvider {

    private static final Logger log = LoggerFactory.getLogger(BasicProvider.class);

    private final Credentials credentials;
    private final PasswordHashes hashes = new PasswordHashes();
    private final CredentialCache cache;
    /** False while the cluster is known to hold no credential: CONNECTs then skip PostgreSQL. */
    private volatile boolean credentialsExist = true;
    /** Whether PostgreSQL is known to be away now (the node's health check), so it is not asked. */
    private final java.util.function.BooleanSupplier databaseAway;
    /** After a failed read, PostgreSQL is not asked again before this (System.nanoTime). */
    private volatile long quietUntil;
    static final long QUIET_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);
    /** Longest an auth thread waits for the batch holding its user name before reading it alone. */
    static final long BATCH_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
    /** User names wanted while the cache had nothing for them, read many in one query. */
    private final CredentialBatches batches;

    BasicProvider(Credentials credentials, Duration cacheTtl, java.util.function.BooleanSupplier databaseAway) {
        this(credentials, cacheTtl, databaseAway, new CredentialBatches.Counts());
    }

    /** @param counts where the batched reads are counted */
    BasicProvider(Credentials credentials, Duration cacheTtl, java.util.function.BooleanSupplier databaseAway,
            CredentialBatches.Counts counts) {
        this.credentials = credentials;
        this.cache = new CredentialCache(cacheTtl, System::nanoTime);
        this.databaseAway = databaseAway;
        this.batches = new CredentialBatches(this::readBatch, counts);
    }

    @Override
    public String name() {
        return "basic";
    }

    @Override
    public AuthResult quick(AuthRequest r) {
        if (!credentialsExist) {
            return AuthResult.NOT_MINE;
        }
        List<Credential> candidates = cache.candidates(r.username(), r.clientId());
        if (candidates == null) {
            if (batchable(r.username())) {
                batches.want(r.username()); // read with the user names of the CONNECTs queued with it
            }
            return null;
        }
        if (candidates.isEmpty()) {
            return AuthResult.NOT_MINE;
        }
        Credential first = candidates.get(0);
        if (first.passwordHash() == null || r.password() != null && cache.verified(first, r.password())) {
            return allowed(first, r);
        }
        return null;
    }

    @Override
    public AuthResult authenticate(AuthRequest r) {
        List<Credential> candidates = cache.candidates(r.username(), r.clientId());
        if (candidates == null) {
            // PostgreSQL known away: answer at once rather than hold an auth thread (and the CONNECT)
            // for the database's connect timeout.
            boolean away = databaseAway.getAsBoolean() || System.nanoTime() - quietUntil < 0;
            try {
                if (away) {
                    throw new IllegalStateException("PostgreSQL is away");
                }
                candidates = lookUp(r.username(), r.clientId());
            } catch (RuntimeException e) {
                if (!away) {
                    quietUntil = System.nanoTime() + QUIET_NANOS;
                }
                log.debug("{}: credentials unavailable: {}", r.clientId(), e.getMessage());
                // A client without user name and password is anonymous as ever.
                return r.username() == null && r.password() == null ? AuthResult.NOT_MINE : AuthResult.unavailable();
            }
        }
        for (Credential c : candidates) {
            if (c.passwordHash() == null || r.password() != null && passwordMatches(c, r.password())) {
                return allowed(c, r);
            }
        }
        return candidates.isEmpty() ? AuthResult.NOT_MINE : AuthResult.badCredentials();
    }

    /**
     * Reads the credentials a CONNECT may match and keeps them: while no credential matches by client
     * ID alone, every credential of the user name at once (a fleet sharing a user name is one read
     * for all its client IDs, and its CONNECTs are answered from the cache without a thread hop),
     * unless it has more than {@link CredentialCache#USERNAME_LIST_MAX}; else those of the pair.
     */
    private List<Credential> lookUp(String username, String clientId) {
        if (username != null && cache.usernameLists() && !cache.tooManyFor(username)) {
            boolean batchable = batchable(username);
            List<Credential> all = batchable ? batches.await(username, BATCH_WAIT_NANOS) : null;
            if (all == null && batchable) {
                List<Credential> read = cache.candidates(username, clientId);
                if (read != null) {
                    return read; // its batch was read while this CONNECT came to wait for it
                }
            }
            if (all == null) {
                long readAt = cache.generation();
                all = credentials.byUsername(username, CredentialCache.USERNAME_LIST_MAX + 1);
                cache.putUsername(username, all.size() <= CredentialCache.USERNAME_LIST_MAX ? all : null, readAt);
            }
            if (all.size() <= CredentialCache.USERNAME_LIST_MAX) {
                return CredentialCache.matching(all, clientId);
            }
        }
        long readAt = cache.generation();
        List<Credential> pair = credentials.candidates(username, clientId);
        cache.putCandidates(username, clientId, pair, readAt);
        return pair;
    }

    /** Whether a user name's credentials may be read with others': its list is wanted and kept. */
    private boolean batchable(String username) {
        return username != null && cache.enabled() && cache.usernameLists() && !cache.tooManyFor(username);
    }

    /** One batch: the credentials of each user name, kept as its list (or as too many for one). */
    private java.util.Map<String, List<Credential>> readBatch(List<String> usernames) {
        long readAt = cache.generation();
        java.util.Map<String, List<Credential>> read = credentials.byUsernames(usernames,
                CredentialCache.USERNAME_LIST_MAX + 1);
        for (String username : usernames) {
            List<Credential> all = read.getOrDefault(username, List.of());
            cache.putUsername(username, all.size() <= CredentialCache.USERNAME_LIST_MAX ? all : null, readAt);
        }
        return read;
    }

    private static AuthResult allowed(Credential c, AuthRequest r) {
        return new AuthResult.Allowed(new Identity("basic", c.id(), r.username(), r.commonName(), c.clientType(),
                c.publish(), c.subscribe(), null));
    }

    private boolean passwordMatches(Credential c, byte[] password) {
        if (cache.verified(c, password)) {
            return true;
        }
        boolean matched = hashes.verify(password, c.passwordHash());
        if (matched) {
            cache.putVerified(c, password);
        }
        return matched;
    }

    /**
     * A credential changed: what it matched and matches now is read again. {@code now} is the
     * credential after the change, null if it was deleted. Whether any credential exists, and any
     * {@code basic} one without a user name, is asked of PostgreSQL only when this change may have
     * made an answer no: a credential that exists proves the first, and one without a user name the
     * second, and one with a user name cannot have made the second no while none was without. An
     * import of 50,000 credentials asked twice per credential on every node before, each a scan.
     */
    void credentialChanged(String id, String username, String clientId, Credential now) {
        cache.forget(id, username, clientId);
        boolean withoutUsername = now != null && Credential.BASIC.equals(now.type()) && now.username() == null;
        boolean noneWithout = cache.usernameLists();
        if (now != null && (withoutUsername || noneWithout)) {
            credentialsExist = true;
            if (withoutUsername && noneWithout) {
                cache.credentialsWithoutUsername(true);
            }
            return;
        }
        refreshCredentialsExist();
    }

    /** Forgets everything read before. */
    void clear() {
        cache.clear();
    }

    void refreshCredentialsExist() {
        if (databaseAway.getAsBoolean()) {
            return; // keeps what it knew: no credential can be made while PostgreSQL is away
        }
        try {
            credentialsExist = credentials.any();
            cache.credentialsWithoutUsername(credentialsExist && credentials.anyWithoutUsername());
        } catch (RuntimeException e) {
            // Keeps what it knew: no credential can be made while PostgreSQL is away.
            log.debug("Whether credentials exist not read: {}", e.getMessage());
        }
    }
}
