package io.fleetmq.app.security;

import io.fleetmq.app.security.provider.AuthProvider;
import io.fleetmq.app.security.provider.AuthRequest;
import io.fleetmq.app.security.provider.AuthResult;
import io.fleetmq.app.security.provider.Identity;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.log.LogLimit;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.BlockList;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.core.security.TopicRules;
import io.fleetmq.core.security.scram.ScramAlgorithm;
import io.fleetmq.persistence.security.BlockedClients;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.session.ClientAccess;
import io.fleetmq.session.SessionGuard;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Authentication and authorization of MQTT clients on one node: CONNECTs are checked against the
 * blocked clients (in memory) and the credentials in PostgreSQL, off the event loops on a bounded
 * pool; the answer carries the client's rights ({@link RuleAccess}). Changes announced by any node
 * reach {@link #changed}: caches are dropped, the blocked list is read again, and the sessions of
 * this node are reviewed (new rules apply, a deleted credential or a blocked client is disconnected).
 *
 * <p>The providers and their settings form a {@link Chain} that is replaced whole when the admin API
 * changes the {@code auth.*} settings: CONNECTs from then on meet the new chain, those in progress
 * finish with the one they started with, and clients connected before keep their connection.
 */
public final class MqttSecurity implements SessionGuard, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MqttSecurity.class);

    /** Shared by every client: a storm of failures costs a few lines, see {@link LogLimit}. */
    private static final LogLimit LOG_LIMIT = new LogLimit(20, java.time.Duration.ofSeconds(10));

    /** How long providers that a settings change replaced stay open for the CONNECTs that still use them. */
    private static final long RETIRE_AFTER_SECONDS = 30;

    /** Rules compiled once per distinct list, shared by every client (and node in the process) using them. */
    private static final CompiledRules COMPILED = new CompiledRules();

    /**
     * Where the runtime overrides of the {@code auth.*} settings come from, and how they become a setup.
     */
    public interface SetupSource {
        /** The overrides stored now, by dotted key; throws when they cannot be read. */
        java.util.Map<String, String> stored();

        /** The setup with {@code overrides}; throws an exception naming the setting when it is not valid. */
        AuthSetup setup(java.util.Map<String, String> overrides);
    }

    /**
     * What authenticates CONNECTs: the setup, the providers it lists in order (basic among them, or
     * not), SCRAM when listed (null otherwise) and the anonymous policy.
     */
    private record Chain(AuthSetup setup, boolean anonymousAllowed, BasicProvider basic, List<AuthProvider> providers,
            java.util.Map<String, AuthProvider> others, ScramAuthentication scram, TopicRules anonymousPublish,
            TopicRules anonymousSubscribe) {

        SecuritySettings settings() {
            return setup.security();
        }
    }

    private final String bindAddress;
    private final Credentials credentials;
    private final BlockedClients blocked;
    private final ProviderFactory factory;
    private final SetupSource source;
    private final java.util.function.BooleanSupplier databaseAway;
    private volatile Chain chain;
    /** Stored overrides this node could not apply (null: none); not tried (nor logged) again until they change. */
    private java.util.Map<String, String> rejected;
    private final RefusedLog refusedLog;
    /** The batched credential reads of every chain this node built. */
    private final CredentialBatches.Counts batchCounts = new CredentialBatches.Counts();
    private final AuthMeters authMeters;
    private final Clock clock;
    private final ThreadPoolExecutor pool;
    /** Refuses a CONNECT whose wait for {@link #pool} would exceed {@code auth.max-wait}. */
    private final AuthQueueBound queueBound;
    /** {@code fleetmq_auth_abandoned_total}: queued CONNECTs dropped unchecked, their clients gone. */
    private final io.micrometer.core.instrument.Counter abandoned;
    private final ExecutorService changes;
    private final ScheduledExecutorService timer;
    private volatile BlockList blockList = BlockList.EMPTY;
    private volatile java.util.Set<String> blockedIds = java.util.Set.of();
    private volatile Consumer<ClientAccess.Review> sessions = review -> { };
    private final io.micrometer.core.instrument.Counter applied;
    private final io.micrometer.core.instrument.Counter settingsRejected;

    /**
     * @param setup       the settings to start with (the configuration with the overrides stored when the
     *                    node started); its pool size and refused-log retention stay for the node's life
     * @param bindAddress where the MQTT listeners are bound: {@code allow-anonymous auto} allows
     *                    anonymous clients only on a loopback address
     * @param factory     builds the providers besides basic, now and after a settings change
     * @param source      the overrides stored through the admin API, read again on every change
     */
    public MqttSecurity(AuthSetup setup, String bindAddress, Credentials credentials, BlockedClients blocked,
            RefusedConnections refused, MeterRegistry meters, Clock clock, ProviderFactory factory,
            SetupSource source, java.util.function.BooleanSupplier databaseAway) {
        SecuritySettings settings = setup.security();
        this.bindAddress = bindAddress;
        this.credentials = credentials;
        this.blocked = blocked;
        this.clock = clock;
        this.factory = factory;
        this.source = source;
        this.databaseAway = databaseAway;
        this.refusedLog = new RefusedLog(refused, meters, clock, settings.refusedRetention());
        this.authMeters = new AuthMeters(meters);
        io.micrometer.core.instrument.FunctionCounter.builder("fleetmq.auth.credential.batches", batchCounts.queries(),
                        java.util.concurrent.atomic.LongAdder::sum)
                .description("Queries that read the credentials of many user names at once for the CONNECTs waiting for them")
                .register(meters);
        io.micrometer.core.instrument.FunctionCounter.builder("fleetmq.auth.credential.batched.usernames",
                        batchCounts.names(), java.util.concurrent.atomic.LongAdder::sum)
                .description("User names whose credentials were read in those queries")
                .register(meters);
        this.queueBound = new AuthQueueBound(settings.maxWait(), settings.threads());
        this.abandoned = io.micrometer.core.instrument.Counter.builder("fleetmq.auth.abandoned")
                .description("CONNECTs whose client stopped waiting (timed out or gone) before an auth thread came to"
                        + " them; not checked")
                .register(meters);
        this.pool = new ThreadPoolExecutor(settings.threads(), settings.threads(), 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(Math.max(1, settings.maxPending())), new DefaultThreadFactory("fleetmq-auth", true),
                new ThreadPoolExecutor.AbortPolicy());
        this.changes = Executors.newSingleThreadExecutor(new DefaultThreadFactory("fleetmq-security-changes", true));
        this.timer = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("fleetmq-security-timer", true));
        this.applied = io.micrometer.core.instrument.Counter.builder("fleetmq.security.changes.applied")
                .description("Changes of credentials, blocked clients and authentication settings this node applied")
                .register(meters);
        this.settingsRejected = io.micrometer.core.instrument.Counter.builder("fleetmq.security.settings.rejected")
                .description("Authentication settings from the admin API this node could not apply (it kept the ones before)")
                .register(meters);
        this.chain = firstChain(setup);
        Gauge.builder("fleetmq.auth.pending", pool, p -> p.getQueue().size())
                .description("CONNECTs waiting for a password check or a credential read")
                .register(meters);
        timer.scheduleWithFixedDelay(this::flushRefused, 1, 1, TimeUnit.SECONDS);
        // Also picks up a change whose announcement was lost, and entries that expire.
        timer.scheduleWithFixedDelay(() -> changed(this::reloadQuietly), 30, 30, TimeUnit.SECONDS);
    }

    /**
     * The chain for {@code setup}; when a provider of its overrides cannot be built on this node (a
     * key file it lacks), the configuration's own, so that the node starts.
     */
    private Chain firstChain(AuthSetup setup) {
        try {
            return built(setup);
        } catch (RuntimeException e) {
            if (setup.overrides().isEmpty()) {
                throw e;
            }
            rejected = setup.overrides();
            settingsRejected.increment();
            log.error("Authentication settings stored through the admin API not applied ({}); starting with the "
                    + "configuration's", e.getMessage());
            return built(source.setup(java.util.Map.of()));
        }
    }

    /** The chain for {@code setup}, its providers built; all or none. */
    private Chain built(AuthSetup setup) {
        java.util.Map<String, AuthProvider> others = factory.build(setup);
        try {
            return chain(setup, others);
        } catch (RuntimeException e) {
            ProviderFactory.closeAll(others);
            throw e;
        }
    }

    /** The chain for {@code setup}, with {@code others} (built by the factory for it). */
    private Chain chain(AuthSetup setup, java.util.Map<String, AuthProvider> others) {
        SecuritySettings settings = setup.security();
        BasicProvider basic = new BasicProvider(credentials, settings.cacheTtl(), databaseAway, batchCounts);
        List<AuthProvider> asked = new java.util.ArrayList<>();
        for (String name : settings.providers()) {
            if ("scram".equals(name)) {
                continue; // enhanced authentication, chosen by the CONNECT's Authentication Method
            }
            AuthProvider p = "basic".equals(name) ? basic : others.get(name);
            if (p == null) {
                throw new IllegalArgumentException("no provider " + name);
            }
            asked.add(p);
        }
        ScramAuthentication scram = settings.providers().contains("scram")
                ? new ScramAuthentication(credentials, this::onAuthThread, refusedLog,
                        (request, username) -> blockList.match(request.clientId(), username, request.address(),
                                clock.instant()).isPresent(),
                        (id, clientId) -> access(id, clientId))
                : null;
        return new Chain(setup, settings.anonymousAllowed(bindAddress), basic, List.copyOf(asked),
                java.util.Map.copyOf(others), scram, TopicRules.of(settings.anonymousPublish()),
                TopicRules.of(settings.anonymousSubscribe()));
    }

    /** Whether clients that no credential matches may connect. */
    public boolean anonymousAllowed() {
        return chain.anonymousAllowed();
    }

    /** The settings CONNECTs are checked with now. */
    public AuthSetup setup() {
        return chain.setup();
    }

    /**
     * Forgets everything read before and reads the blocked list and whether credentials exist again;
     * called when a node incarnation starts, after its change follower is positioned.
     *
     * @param sessions reviews every session of the incarnation
     */
    public void resync(Consumer<ClientAccess.Review> sessions) {
        this.sessions = sessions;
        chain.basic().clear();
        providersForget();
        reloadQuietly();
    }

    // ======================================================================== CONNECT

    @Override
    public CompletionStage<Verdict> authenticate(ConnectRequest request) {
        Optional<BlockEntry> block = blockList.match(request.clientId(), request.connect().username(),
                request.address(), clock.instant());
        if (block.isPresent()) {
            authMeters.refused("blocklist", ReasonCode.BANNED);
            return CompletableFuture.completedFuture(refuse(request, ReasonCode.BANNED, RefusedConnection.BLOCKED));
        }
        AuthRequest auth = authRequest(request);
        Chain c = chain; // this CONNECT meets one chain from start to end, whatever changes meanwhile
        List<AuthProvider> providers = c.providers();
        // What providers can answer from memory is answered here: no wait behind a storm of hashes.
        int next = 0;
        for (; next < providers.size(); next++) {
            AuthResult quick = providers.get(next).quick(auth);
            if (quick == null) {
                break;
            }
            if (!(quick instanceof AuthResult.NotMine)) {
                return CompletableFuture.completedFuture(verdict(c, request, providers.get(next).name(), quick));
            }
        }
        if (next == providers.size()) {
            return CompletableFuture.completedFuture(anonymous(c, request));
        }
        int from = next;
        try {
            return onAuthThread(true, () -> {
                try {
                    return ask(c, request, auth, from);
                } catch (RuntimeException e) {
                    if (LOG_LIMIT.allow()) {
                        log.warn("{}: authentication failed: {}{}",
                                ClientText.of(request.clientId()), e.toString(), LOG_LIMIT.suppressedNote());
                    }
                    authMeters.refused("none", ReasonCode.SERVER_UNAVAILABLE);
                    return refuse(request, ReasonCode.SERVER_UNAVAILABLE, RefusedConnection.AUTH_UNAVAILABLE);
                }
            });
        } catch (RejectedExecutionException e) {
            return busy(request); // beyond auth.max-wait of expected work, or auth.max-pending queued
        }
    }

    /**
     * Queues {@code work} for an auth thread, which skips it if the result was completed (cancelled)
     * meanwhile: its CONNECT stopped waiting. What each task took feeds the queue's bound.
     *
     * @param boundedByWait whether {@code auth.max-wait} applies (CONNECTs), besides {@code auth.max-pending}
     * @throws RejectedExecutionException those queued already would hold the threads longer than
     *                                    {@code auth.max-wait}, or {@code auth.max-pending} wait
     */
    private <T> CompletableFuture<T> onAuthThread(boolean boundedByWait, java.util.function.Supplier<T> work) {
        if (boundedByWait && !queueBound.admits(pool.getQueue().size())) {
            throw new RejectedExecutionException("the auth queue's expected wait is beyond auth.max-wait");
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        pool.execute(() -> {
            if (result.isDone()) {
                abandoned.increment(); // its client stopped waiting (ConnectWaits cancelled it)
                return;
            }
            long start = System.nanoTime();
            try {
                result.complete(work.get());
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            } finally {
                queueBound.took(System.nanoTime() - start);
            }
        });
        return result;
    }

    /** 0x89 Server busy: a storm of CONNECTs (bad passwords cost a hash each) is refused beyond the auth queue's bound. */
    private CompletableFuture<Verdict> busy(ConnectRequest request) {
        authMeters.refused("none", ReasonCode.SERVER_BUSY);
        return CompletableFuture.completedFuture(refuse(request, ReasonCode.SERVER_BUSY, RefusedConnection.AUTH_BUSY));
    }

    /**
     * Enhanced authentication [MQTT-4.12]: SCRAM-SHA-256 and SCRAM-SHA-512 when {@code scram} is a
     * provider; any other method (or SCRAM not enabled) is refused with 0x8C.
     */
    @Override
    public CompletionStage<AuthStep> startAuthentication(ConnectRequest request, String method, byte[] data) {
        return start(request, method, data, true);
    }

    /** As a CONNECT's, but past {@code auth.max-wait}: a working connection is not ended for a storm of others. */
    @Override
    public CompletionStage<AuthStep> startReauthentication(ConnectRequest request, String method, byte[] data) {
        return start(request, method, data, false);
    }

    private CompletionStage<AuthStep> start(ConnectRequest request, String method, byte[] data, boolean boundedByWait) {
        ScramAlgorithm algorithm = ScramAlgorithm.ofMechanism(method);
        ScramAuthentication scram = chain.scram();
        if (scram == null || algorithm == null) {
            refusedLog.refused(request, request.connect().username(), data != null, RefusedConnection.BAD_AUTH_METHOD);
            authMeters.refused(scram == null ? "none" : "scram", ReasonCode.BAD_AUTHENTICATION_METHOD);
            return CompletableFuture.completedFuture(new AuthStep.Failed(ReasonCode.BAD_AUTHENTICATION_METHOD));
        }
        return counted(scram.start(request, algorithm, data, boundedByWait));
    }

    /**
     * Counts a SCRAM exchange once it ends, however many rounds it takes. Cancelling what it returns
     * cancels {@code step}, so that an auth thread skips a step whose CONNECT stopped waiting.
     */
    private CompletionStage<AuthStep> counted(CompletionStage<AuthStep> step) {
        CompletableFuture<AuthStep> source = step.toCompletableFuture();
        CompletableFuture<AuthStep> out = source.thenApply(s -> {
            if (s instanceof AuthStep.Continue more) {
                return new AuthStep.Continue(more.data(), data -> counted(more.next().next(data)));
            }
            if (s instanceof AuthStep.Allowed) {
                authMeters.allowed("scram");
            } else if (s instanceof AuthStep.Failed failed) {
                authMeters.refused("scram", failed.code());
            }
            return s;
        });
        out.whenComplete((s, e) -> {
            if (e instanceof java.util.concurrent.CancellationException) {
                source.cancel(false);
            }
        });
        return out;
    }

    /** Asks the providers from {@code from} on, in order, on an auth thread. */
    private Verdict ask(Chain c, ConnectRequest request, AuthRequest auth, int from) {
        for (int i = from; i < c.providers().size(); i++) {
            AuthResult result = c.providers().get(i).authenticate(auth);
            if (!(result instanceof AuthResult.NotMine)) {
                return verdict(c, request, c.providers().get(i).name(), result);
            }
        }
        return anonymous(c, request);
    }

    private Verdict verdict(Chain c, ConnectRequest request, String provider, AuthResult result) {
        if (result instanceof AuthResult.Allowed allowed) {
            authMeters.allowed(provider);
            Identity id = allowed.identity();
            return Verdict.allowed(access(c, id, request.clientId()), id.clientType());
        }
        AuthResult.Denied denied = (AuthResult.Denied) result;
        authMeters.refused(provider, denied.code());
        return refuse(request, denied.code(), denied.reason());
    }

    private static AuthRequest authRequest(ConnectRequest r) {
        return new AuthRequest(r.clientId(), r.connect().username(), r.connect().password(), r.address(), r.tls(),
                r.certificates(), r.version());
    }

    /** The subject CN of the client's own certificate, or null. */
    private static String commonName(ConnectRequest request) {
        return request.certificates().isEmpty() ? null
                : io.fleetmq.app.security.provider.CommonNames.of(request.certificates().get(0));
    }

    /** A CONNECT that no provider took. */
    private Verdict anonymous(Chain c, ConnectRequest request) {
        if (c.anonymousAllowed()) {
            authMeters.allowed("anonymous");
            return Verdict.allowed(new RuleAccess(null, request.connect().username(), request.clientId(),
                    commonName(request), c.anonymousPublish(), c.anonymousSubscribe(), c.settings().denyDisconnect()),
                    null);
        }
        // Never say which part was wrong: a user name or password that matches nothing is "bad".
        boolean triedCredentials = request.connect().username() != null || request.connect().password() != null;
        authMeters.refused("anonymous", ReasonCode.NOT_AUTHORIZED);
        return triedCredentials
                ? refuse(request, ReasonCode.BAD_USER_NAME_OR_PASSWORD, RefusedConnection.BAD_CREDENTIALS)
                : refuse(request, ReasonCode.NOT_AUTHORIZED, RefusedConnection.ANONYMOUS_REFUSED);
    }

    private RuleAccess access(Identity id, String clientId) {
        return access(chain, id, clientId);
    }

    private static RuleAccess access(Chain c, Identity id, String clientId) {
        return new RuleAccess(id.credentialId(), id.username(), clientId, id.commonName(),
                rules(id.credentialId(), id.publish()), rules(id.credentialId(), id.subscribe()),
                c.settings().denyDisconnect(), id.expiresAt());
    }

    /** New rules of {@code c} for a client that keeps its user name, certificate name and expiry. */
    private RuleAccess access(Credential c, String clientId, ClientAccess before) {
        RuleAccess r = before instanceof RuleAccess ra ? ra : null;
        return new RuleAccess(c.id(), before.username(), clientId, r == null ? null : r.commonName(),
                rules(c.id(), c.publish()), rules(c.id(), c.subscribe()), chain.settings().denyDisconnect(),
                r == null ? null : r.expiresAt());
    }

    /** A credential's rules; one the API would refuse (written to PostgreSQL by hand) allows nothing. */
    private static TopicRules rules(String credentialId, List<String> filters) {
        try {
            return COMPILED.of(filters);
        } catch (IllegalArgumentException e) {
            log.warn("Credential {} has an invalid rule, so that list allows nothing: {}", credentialId, e.getMessage());
            return TopicRules.NONE;
        }
    }

    private Verdict refuse(ConnectRequest request, ReasonCode code, String reason) {
        refusedLog.refused(request, reason);
        return Verdict.refused(code);
    }

    // ======================================================================== changes

    /** A change announced by any node (this one too); applied on a thread of its own. */
    public void changed(SecurityChange change) {
        changed(() -> apply(change));
    }

    /** Changes are applied one at a time, in order, on their own thread. */
    private void changed(Runnable task) {
        try {
            changes.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    log.warn("Applying a security change failed: {}", e.toString());
                }
            });
        } catch (RejectedExecutionException e) {
            log.debug("Security change not applied: stopping");
        }
    }

    private void apply(SecurityChange change) {
        switch (change.kind()) {
            case CREDENTIAL -> credentialChanged(change);
            case BLOCKED -> blockedChanged();
            case ADMIN_TOKEN -> { } // tokens are read from PostgreSQL on every call
            case SETTINGS -> settingsChanged();
        }
        applied.increment();
    }

    private void credentialChanged(SecurityChange change) {
        providersForget();
        Optional<Credential> now;
        try {
            now = change.deleted() ? Optional.empty() : credentials.get(change.id());
        } catch (RuntimeException e) {
            chain.basic().clear(); // what it matches now is unknown: nothing read before is trusted
            log.warn("Credential {} changed but could not be read: {}; its clients keep their rules until they "
                    + "reconnect", change.id(), e.getMessage());
            return;
        }
        chain.basic().credentialChanged(change.id(), now.map(Credential::username).orElse(null),
                now.map(Credential::clientId).orElse(null), now.orElse(null));
        if (now.isEmpty() || change.accessChanged()) {
            // Its clients authenticated with what no longer holds: they connect again and are checked anew.
            // Only their sessions are reviewed; those of other credentials are not even asked.
            sessions.accept(ClientAccess.Review.concerning(change.id(), s -> change.id().equals(s.access().credentialId())
                    ? new ClientAccess.Outcome(RuleAccess.none(s.clientId(), s.access().username()),
                            ReasonCode.NOT_AUTHORIZED, "credential changed")
                    : ClientAccess.Outcome.KEEP));
            return;
        }
        Credential c = now.get();
        sessions.accept(ClientAccess.Review.concerning(change.id(), s -> change.id().equals(s.access().credentialId())
                ? ClientAccess.Outcome.replace(access(c, s.clientId(), s.access()))
                : ClientAccess.Outcome.KEEP));
    }

    /** Tells the providers other than basic that credentials changed. */
    private void providersForget() {
        Chain c = chain;
        for (AuthProvider p : c.providers()) {
            if (p != c.basic()) {
                try {
                    p.credentialsChanged();
                } catch (RuntimeException e) {
                    log.warn("Provider {} failed to forget changed credentials: {}", p.name(), e.toString());
                }
            }
        }
    }

    private void blockedChanged() {
        if (reloadBlocked()) {
            reviewBlocked();
        }
    }

    /** Disconnects the connected clients the blocked list matches now. */
    private void reviewBlocked() {
        BlockList list = blockList;
        sessions.accept(s -> s.connected()
                && list.match(s.clientId(), s.access().username(), s.address(), clock.instant()).isPresent()
                ? ClientAccess.Outcome.disconnect(ReasonCode.ADMINISTRATIVE_ACTION, "blocked")
                : ClientAccess.Outcome.KEEP);
    }

    private void reloadQuietly() {
        java.util.Set<String> before = blockedIds;
        if (reloadBlocked() && !blockedIds.equals(before)) {
            reviewBlocked(); // an entry whose announcement this node missed
        }
        chain.basic().refreshCredentialsExist();
        settingsChanged(); // overrides whose announcement this node missed
    }

    /**
     * Reads the stored overrides of the {@code auth.*} settings and, when they differ from those in
     * use, builds the chain they describe and puts it in place. Overrides this node cannot apply (a
     * key file missing here, say) leave the chain as it was, logged and counted once.
     */
    private void settingsChanged() {
        java.util.Map<String, String> stored;
        try {
            stored = source.stored();
        } catch (RuntimeException e) {
            log.debug("Authentication settings not read: {}", e.getMessage());
            return;
        }
        Chain before = chain;
        if (stored.equals(before.setup().overrides()) || stored.equals(rejected)) { // equals(null) is false
            return;
        }
        Chain next;
        try {
            next = built(source.setup(stored));
        } catch (RuntimeException e) {
            rejected = stored;
            settingsRejected.increment();
            log.error("Authentication settings from the admin API not applied on this node, which keeps those "
                    + "before: {}", e.getMessage());
            return;
        }
        rejected = null;
        next.basic().refreshCredentialsExist();
        chain = next;
        log.info("Authentication settings changed: providers {}, anonymous clients {}, {} setting(s) overridden "
                + "through the admin API", next.settings().providers(), next.anonymousAllowed() ? "allowed" : "refused",
                stored.size());
        // CONNECTs that started with the chain before may still ask its providers.
        try {
            timer.schedule(() -> ProviderFactory.closeAll(before.others()), RETIRE_AFTER_SECONDS, TimeUnit.SECONDS);
        } catch (RejectedExecutionException e) {
            ProviderFactory.closeAll(before.others());
        }
    }

    private boolean reloadBlocked() {
        try {
            List<BlockEntry> active = blocked.active(clock.instant());
            blockList = BlockList.of(active);
            blockedIds = active.stream().map(BlockEntry::id).collect(java.util.stream.Collectors.toSet());
            return true;
        } catch (RuntimeException e) {
            log.debug("Blocked clients not read: {}", e.getMessage());
            return false;
        }
    }

    private void flushRefused() {
        refusedLog.flush();
    }

    @Override
    public void close() {
        timer.shutdownNow();
        ProviderFactory.closeAll(chain.others());
        changes.shutdownNow();
        pool.shutdownNow();
        refusedLog.flush();
    }
}
