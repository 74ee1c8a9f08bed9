package io.fleetmq.app.security;

import io.fleetmq.app.security.provider.Identity;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.security.Credential;
import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.core.security.scram.ScramAlgorithm;
import io.fleetmq.core.security.scram.ScramException;
import io.fleetmq.core.security.scram.ScramKeys;
import io.fleetmq.core.security.scram.ScramServer;
import io.fleetmq.persistence.security.Credentials;
import io.fleetmq.session.ClientAccess;
import io.fleetmq.session.SessionGuard.AuthStep;
import io.fleetmq.session.SessionGuard.ConnectRequest;
import io.fleetmq.session.SessionGuard.Verdict;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SCRAM-SHA-256 and SCRAM-SHA-512 as MQTT 5 enhanced authentication ({@code scram} in
 * {@code auth.providers}): the client's first message names the user, whose SCRAM credential is
 * read from PostgreSQL on the auth pool; the server's first message goes back in AUTH 0x18; the
 * client's proof is checked when its final message arrives, and the server's signature goes back
 * in the CONNACK (or AUTH 0x00 on re-authentication). A user name without a SCRAM credential gets
 * an exchange like any other, which fails at the proof: 0x86 either way, never saying which.
 */
final class ScramAuthentication {

    private static final Logger log = LoggerFactory.getLogger(ScramAuthentication.class);

    /**
     * The node's auth threads: runs a step there, under the auth queue's bound, and skips it if its
     * result was cancelled meanwhile (the CONNECT stopped waiting).
     */
    @FunctionalInterface
    interface AuthThreads {
        /**
         * @param boundedByWait whether {@code auth.max-wait} applies: for a CONNECT, not a re-authentication
         * @throws RejectedExecutionException the auth queue is at its bound: Server busy
         */
        CompletableFuture<AuthStep> run(boolean boundedByWait, java.util.function.Supplier<AuthStep> step);
    }

    private final Credentials credentials;
    private final AuthThreads pool;
    private final RefusedLog refusedLog;
    private final BiPredicate<ConnectRequest, String> blocked;
    private final BiFunction<Identity, String, ClientAccess> access;
    /** Derives the salts shown for user names without a credential; the same name gets the same salt. */
    private final byte[] unknownUserSecret = new byte[32];

    /**
     * @param blocked whether the blocked clients match the request with this user name
     * @param access  the rights of an identity for a client ID
     */
    ScramAuthentication(Credentials credentials, AuthThreads pool, RefusedLog refusedLog,
            BiPredicate<ConnectRequest, String> blocked, BiFunction<Identity, String, ClientAccess> access) {
        this.credentials = credentials;
        this.pool = pool;
        this.refusedLog = refusedLog;
        this.blocked = blocked;
        this.access = access;
        new SecureRandom().nextBytes(unknownUserSecret);
    }

    /**
     * The client's first message arrived (in CONNECT, or in AUTH 0x19 to re-authenticate).
     *
     * @param boundedByWait whether the auth queue's {@code auth.max-wait} applies (a CONNECT)
     */
    CompletionStage<AuthStep> start(ConnectRequest request, ScramAlgorithm algorithm, byte[] clientFirst,
            boolean boundedByWait) {
        ScramServer.ClientFirst first;
        try {
            first = ScramServer.parseClientFirst(clientFirst);
        } catch (ScramException e) {
            log.debug("{}: SCRAM client-first refused: {}", request.clientId(), e.getMessage());
            return done(refuse(request, null, ReasonCode.BAD_USER_NAME_OR_PASSWORD, RefusedConnection.BAD_CREDENTIALS));
        }
        if (blocked.test(request, first.username())) {
            return done(refuse(request, first.username(), ReasonCode.BANNED, RefusedConnection.BLOCKED));
        }
        try {
            return pool.run(boundedByWait, () -> serverFirst(request, algorithm, first));
        } catch (RejectedExecutionException e) {
            return done(refuse(request, first.username(), ReasonCode.SERVER_BUSY, RefusedConnection.AUTH_BUSY));
        }
    }

    /** On an auth thread: reads the credential and answers with server-first. */
    private AuthStep serverFirst(ConnectRequest request, ScramAlgorithm algorithm, ScramServer.ClientFirst first) {
        Optional<Credential> found;
        try {
            found = credentials.scram(first.username());
        } catch (RuntimeException e) {
            log.debug("{}: SCRAM credentials unavailable: {}", request.clientId(), e.getMessage());
            return refuse(request, first.username(), ReasonCode.SERVER_UNAVAILABLE, RefusedConnection.AUTH_UNAVAILABLE);
        }
        // A credential stored for the other algorithm cannot answer this exchange: as if there were none.
        Credential credential = found.filter(c -> c.scram() != null && c.scram().algorithm() == algorithm)
                .orElse(null);
        ScramKeys keys = credential != null ? credential.scram()
                : ScramServer.unknownUser(algorithm, first.username(), unknownUserSecret);
        ScramServer.Exchange exchange = ScramServer.serverFirst(first, keys, ScramServer.newNonce());
        return new AuthStep.Continue(exchange.serverFirst(),
                clientFinal -> done(finish(request, exchange, credential, clientFinal)));
    }

    /** The client's final message: its proof decides. Only HMACs, cheap enough for the session's thread. */
    private AuthStep finish(ConnectRequest request, ScramServer.Exchange exchange, Credential credential,
            byte[] clientFinal) {
        byte[] serverFinal;
        try {
            serverFinal = exchange.finish(clientFinal);
        } catch (ScramException e) {
            log.debug("{}: SCRAM exchange of {} refused: {}", request.clientId(), exchange.username(), e.getMessage());
            return refuse(request, exchange.username(), ReasonCode.BAD_USER_NAME_OR_PASSWORD,
                    RefusedConnection.BAD_CREDENTIALS);
        }
        if (credential == null) {
            // Unreachable with random keys; never let a user without a credential in.
            return refuse(request, exchange.username(), ReasonCode.BAD_USER_NAME_OR_PASSWORD,
                    RefusedConnection.BAD_CREDENTIALS);
        }
        Identity id = new Identity("scram", credential.id(), exchange.username(), null, credential.clientType(),
                credential.publish(), credential.subscribe(), null);
        return new AuthStep.Allowed(Verdict.allowed(access.apply(id, request.clientId()), id.clientType()),
                serverFinal);
    }

    private AuthStep refuse(ConnectRequest request, String username, ReasonCode code, String reason) {
        refusedLog.refused(request, username, true, reason);
        return new AuthStep.Failed(code);
    }

    private static CompletionStage<AuthStep> done(AuthStep step) {
        return CompletableFuture.completedFuture(step);
    }
}
