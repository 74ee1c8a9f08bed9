package io.fleetmq.app.http;

import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.security.SecurityChange;
import io.fleetmq.persistence.auth.PasswordHashes;
import java.time.Clock;
import java.time.Duration;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The authenticated admin API under {@code /api/v1}: its routes, and what they share. The admin
 * port opens before PostgreSQL is reached, so the API answers 503 until {@link #connect} hands it
 * the stores.
 */
public final class AdminApi {

    static final String PREFIX = "/api/v1";
    private static final Logger log = LoggerFactory.getLogger(AdminApi.class);
    /** Entity ids are UUIDs; anything else names no entity (and never reaches SQL). */
    private static final Pattern ID = Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    private final SecurityChange.Announcer announcer;
    private final Duration tokenTtl;
    private final PasswordHashes hashes;
    private final Clock clock;
    private volatile SecurityStores stores;
    private volatile InitialAdmin initialAdmin;
    private volatile AuthSettingsRoutes.Control authSettings;
    private volatile RetainedMessages retainedMessages;
    private volatile ClusterNodes clusterNodes;
    private volatile OperationsView operations;
    private volatile java.util.function.Supplier<SessionsView> sessions = () -> null;
    private AuthRoutes auth;

    /**
     * @param announcer told of every successful write, so that every node applies it
     * @param tokenTtl  lifetime of a login token ({@code admin.token-ttl})
     */
    public AdminApi(SecurityChange.Announcer announcer, Duration tokenTtl, PasswordHashes hashes) {
        this(announcer, tokenTtl, hashes, Clock.systemUTC());
    }

    AdminApi(SecurityChange.Announcer announcer, Duration tokenTtl, PasswordHashes hashes, Clock clock) {
        this.announcer = announcer;
        this.tokenTtl = tokenTtl;
        this.hashes = hashes;
        this.clock = clock;
    }

    /** Makes the API available on the given stores; {@code initialAdmin} is retried on login until it succeeded. */
    public void connect(SecurityStores stores, InitialAdmin initialAdmin) {
        this.initialAdmin = initialAdmin;
        this.stores = stores;
    }

    /**
     * Lets the API change the {@code auth.*} settings at runtime.
     *
     * @param base  the node's configuration (file, environment, defaults)
     * @param check builds the providers of a setup as a node would, and closes them; throws a
     *              {@link io.fleetmq.app.config.ConfigException} naming the setting that keeps one from being built
     */
    public void authSettings(io.fleetmq.app.config.Settings base,
            java.util.function.Consumer<io.fleetmq.app.security.AuthSetup> check) {
        this.authSettings = new AuthSettingsRoutes.Control() {
            @Override
            public io.fleetmq.app.config.Settings base() {
                return base;
            }

            @Override
            public void check(io.fleetmq.app.security.AuthSetup setup) {
                check.accept(setup);
            }
        };
    }

    /** Lets the API read and change retained messages and publish (until then it answers 503). */
    public void retainedMessages(RetainedMessages messages) {
        this.retainedMessages = messages;
    }

    /** Lets the API list the cluster's nodes and drain them (until then it answers 503). */
    public void clusterNodes(ClusterNodes nodes) {
        this.clusterNodes = nodes;
    }

    RetainedMessages retainedMessages() {
        return retainedMessages;
    }

    ClusterNodes clusterNodes() {
        return clusterNodes;
    }

    /** Lets the API show dropped messages, statistics and shared subscriptions of the cluster. */
    public void operations(OperationsView view) {
        this.operations = view;
    }

    OperationsView operations() {
        OperationsView v = operations;
        if (v == null) {
            throw ApiException.unavailable("the node is starting; try again shortly");
        }
        return v;
    }

    /** Lets the API see and act on the cluster's sessions; {@code current} gives null while no incarnation serves. */
    public void sessions(java.util.function.Supplier<SessionsView> current) {
        this.sessions = current;
    }

    /** The sessions of the serving incarnation, or a 503 while there is none. */
    SessionsView sessions() {
        SessionsView view = sessions.get();
        if (view == null) {
            throw ApiException.unavailable("the node is not part of the cluster now; try again shortly");
        }
        return view;
    }

    AuthSettingsRoutes.Control authSettingsControl() {
        return authSettings;
    }

    /** Every operation of the API, to be registered and documented. */
    RouteTable routes() {
        RouteTable table = new RouteTable();
        auth = new AuthRoutes(this);
        auth.addTo(table);
        new CredentialRoutes(this).addTo(table);
        new BlockedRoutes(this).addTo(table);
        new RefusedConnectionRoutes(this).addTo(table);
        new AuthSettingsRoutes(this).addTo(table);
        new RetainedRoutes(this).addTo(table);
        new PublishRoutes(this).addTo(table);
        new ClusterNodeRoutes(this).addTo(table);
        new OperationsRoutes(this).addTo(table);
        new SessionRoutes(this).addTo(table);
        return table;
    }

    /** The bearer check in front of every {@code /api/} path but {@code openPaths}. */
    void requireToken(io.javalin.http.Context ctx, java.util.Set<String> openPaths) {
        auth.requireToken(ctx, openPaths);
    }

    SecurityStores stores() {
        SecurityStores s = stores;
        if (s == null) {
            throw ApiException.unavailable("the node is starting; try again shortly");
        }
        return s;
    }

    InitialAdmin initialAdmin() {
        return initialAdmin;
    }

    Duration tokenTtl() {
        return tokenTtl;
    }

    PasswordHashes hashes() {
        return hashes;
    }

    Clock clock() {
        return clock;
    }

    /** Tells every node; a failure to announce does not undo the write, which nodes pick up later. */
    void announce(SecurityChange change) {
        try {
            announcer.announce(change);
        } catch (RuntimeException e) {
            log.warn("Could not announce {} {}: {}", change.kind(), change.id(), HealthStatus.describe(e));
        }
    }

    /** The path parameter {@code id}, or a 404 naming {@code what} if it cannot be an id. */
    static String id(io.javalin.http.Context ctx, String what) {
        String id = ctx.pathParam("id");
        if (!ID.matcher(id).matches()) {
            throw ApiException.notFound("no " + what + " with id '" + abbreviate(id) + "'");
        }
        return id.toLowerCase(java.util.Locale.ROOT);
    }

    static String abbreviate(String s) {
        return s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }
}
