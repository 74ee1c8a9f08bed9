package io.fleetmq.app.security;

import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.persistence.security.RefusedConnections;
import io.fleetmq.session.SessionGuard;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log of refused connections: every refusal is counted at once in
 * {@code fleetmq_connections_refused_total{reason}} and gathered per client ID in memory, and the
 * gathered entries go to PostgreSQL once a second in one batch, so a storm of bad CONNECTs costs one
 * write a second, not one per CONNECT. Never holds a password.
 */
final class RefusedLog {

    private static final Logger log = LoggerFactory.getLogger(RefusedLog.class);
    /** Client IDs gathered between two writes; beyond, refusals are only counted. */
    static final int MAX_PENDING = 10_000;

    private final RefusedConnections store;
    private final MeterRegistry meters;
    private final Clock clock;
    private final Duration retention;
    private final Map<String, Counter> byReason = new ConcurrentHashMap<>();
    private final Counter unlogged;
    private Map<String, RefusedConnection> pending = new HashMap<>();
    private Instant lastPurge = Instant.EPOCH;

    RefusedLog(RefusedConnections store, MeterRegistry meters, Clock clock, Duration retention) {
        this.store = store;
        this.meters = meters;
        this.clock = clock;
        this.retention = retention;
        this.unlogged = Counter.builder("fleetmq.connections.refused.unlogged")
                .description("Refused connections counted but not written to the log of refused connections "
                        + "(too many different client IDs at once, or PostgreSQL unavailable)")
                .register(meters);
        // Every reason's series from the start, so rate() and alerts see the first refusal.
        for (String reason : java.util.List.of(RefusedConnection.BAD_CREDENTIALS, RefusedConnection.NOT_AUTHORIZED,
                RefusedConnection.BLOCKED, RefusedConnection.ANONYMOUS_REFUSED, RefusedConnection.AUTH_UNAVAILABLE,
                RefusedConnection.AUTH_BUSY, RefusedConnection.BAD_AUTH_METHOD)) {
            counter(reason);
        }
    }

    private Counter counter(String reason) {
        return byReason.computeIfAbsent(reason, r -> Counter.builder("fleetmq.connections.refused")
                .description("CONNECTs refused by authentication, authorization or blocking, by reason")
                .tag("reason", r)
                .register(meters));
    }

    /** Counts and gathers one refusal. */
    void refused(SessionGuard.ConnectRequest request, String reason) {
        refused(request, request.connect().username(), request.connect().password() != null, reason);
    }

    /**
     * Counts and gathers one refusal of a client that named itself elsewhere than in the CONNECT's
     * user name (in an enhanced authentication's data), and gave a secret there or not.
     */
    void refused(SessionGuard.ConnectRequest request, String username, boolean secretGiven, String reason) {
        counter(reason).increment();
        Instant now = clock.instant();
        String clientId = request.clientId() == null ? "" : request.clientId();
        RefusedConnection entry = new RefusedConnection(clientId, username, address(request.address()), secretGiven,
                request.tls(), reason, now, now, 1);
        synchronized (this) {
            RefusedConnection before = pending.get(clientId);
            if (before == null && pending.size() >= MAX_PENDING) {
                unlogged.increment();
                return;
            }
            pending.put(clientId, before == null ? entry : new RefusedConnection(clientId, entry.username(),
                    entry.address(), entry.passwordGiven(), entry.tls(), reason, before.firstAt(), now,
                    before.count() + 1));
        }
    }

    /** Writes what was gathered; called once a second on the node's timer. */
    void flush() {
        List<RefusedConnection> batch;
        synchronized (this) {
            if (pending.isEmpty()) {
                batch = List.of();
            } else {
                batch = new ArrayList<>(pending.values());
                pending = new HashMap<>();
            }
        }
        if (!batch.isEmpty()) {
            try {
                store.record(batch);
            } catch (RuntimeException e) {
                unlogged.increment(batch.stream().mapToLong(RefusedConnection::count).sum());
                log.warn("{} refused connections not written to the log: {}", batch.size(), e.getMessage());
            }
        }
        Instant now = clock.instant();
        if (Duration.between(lastPurge, now).compareTo(Duration.ofMinutes(10)) >= 0) {
            lastPurge = now;
            try {
                int purged = store.purgeBefore(now.minus(retention));
                if (purged > 0) {
                    log.debug("Removed {} refused connections older than {}", purged, retention);
                }
            } catch (RuntimeException e) {
                log.debug("Log of refused connections not purged: {}", e.getMessage());
            }
        }
    }

    private static String address(InetAddress address) {
        return address == null ? null : address.getHostAddress();
    }
}
