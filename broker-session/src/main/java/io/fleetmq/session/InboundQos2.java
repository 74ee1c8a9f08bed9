package io.fleetmq.session;

import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.log.LogLimit;
import io.fleetmq.persistence.redis.Qos2Receipts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receive side of one session's QoS 2 flows: packet identifiers of PUBLISH packets received
 * from the client and not yet released by PUBREL. Used by the session's actor only, so it needs no
 * locks.
 *
 * <p>For a persistent session the identifiers whose message Kafka stored are also kept in Redis
 * ({@link Qos2Receipts}), written before PUBREC goes out. A node that dies after storing a message
 * and before its PUBREC reached the client thus leaves the identifier where the node the session
 * resumes on can read it: the client's resend is answered PUBREC and not stored again
 * [MQTT-4.3.3-10].
 */
final class InboundQos2 {

    private static final Logger log = LoggerFactory.getLogger(InboundQos2.class);

    /** Shared by every client: a storm of failures costs a few lines, see {@link LogLimit}. */
    private static final LogLimit LOG_LIMIT = new LogLimit(20, java.time.Duration.ofSeconds(10));
    static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    /** What a packet identifier stands for. */
    private enum State {
        /** Kafka is storing the message; no PUBREC yet. */
        STORING,
        /** Stored; PUBREC is (or is about to be) sent. */
        STORED,
        /** Stored by an earlier connection of the session, as Redis told when the session resumed. */
        RESUMED
    }

    private final String clientId;
    /** Null where the node has no Redis: receipts then live in memory only. */
    private final Qos2Receipts receipts;
    private final MeterRegistry meters;
    private final Map<Integer, State> ids = new HashMap<>();

    InboundQos2(String clientId, Qos2Receipts receipts, MeterRegistry meters) {
        this.clientId = clientId;
        this.receipts = receipts;
        this.meters = meters;
    }

    /**
     * Whether a PUBLISH with {@code packetId} is a resend of a message this session already has.
     * An identifier learned from Redis counts only for a PUBLISH with DUP set: one without DUP is a
     * first attempt [MQTT-3.3.1-1], so the client considers the identifier free, and a receipt left
     * behind (its removal after PUBREL failed) must not swallow a new message.
     */
    boolean isResend(int packetId, boolean dup) {
        State s = ids.get(packetId);
        return s != null && (s != State.RESUMED || dup);
    }

    /** For a resend: whether the message is stored, so PUBREC may be sent again. */
    boolean isStored(int packetId) {
        State s = ids.get(packetId);
        return s == State.STORED || s == State.RESUMED;
    }

    /** A new QoS 2 PUBLISH goes to Kafka. */
    void storing(int packetId) {
        ids.put(packetId, State.STORING);
    }

    /**
     * Kafka answered for the message. If it did not store it, the identifier is forgotten: no PUBREC
     * with success, and the client may send it again as new. If it did, completes when PUBREC may be
     * sent: at once for a session that ends with its connection, after Redis recorded the identifier
     * for a persistent one.
     *
     * <p>If Redis cannot record it, PUBREC is sent anyway. The message is stored in Kafka by then and
     * will be delivered; refusing it (an error PUBREC) would tell the client it was not stored, and
     * withholding PUBREC would only make the client resend it. The identifier stays in this node's
     * memory, so exactly once still holds unless this node also dies before PUBREL; that degraded
     * case is counted ({@code fleetmq_qos2_receipts_failed_total{operation="record"}}).
     */
    CompletableFuture<Void> settled(int packetId, boolean stored, long sessionExpirySeconds) {
        if (!stored) {
            ids.remove(packetId);
            return DONE;
        }
        ids.put(packetId, State.STORED);
        if (receipts == null || sessionExpirySeconds == 0) {
            return DONE;
        }
        return redis(() -> receipts.add(clientId, packetId, Duration.ofSeconds(sessionExpirySeconds)))
                .handle((ok, error) -> {
                    if (error != null) {
                        failed("record", error);
                    }
                    return (Void) null;
                })
                .toCompletableFuture();
    }

    /**
     * PUBREL came: PUBCOMP is due and the identifier is free again [MQTT-4.3.3-11].
     *
     * @return whether the identifier was known (PUBCOMP with success, else 0x92)
     */
    boolean released(int packetId, long sessionExpirySeconds) {
        boolean known = ids.remove(packetId) != null;
        if (receipts != null && sessionExpirySeconds > 0) {
            // Removed even when unknown here: the receipt of a session resumed while Redis was away.
            redis(() -> receipts.remove(clientId, packetId)).whenComplete((ok, error) -> {
                if (error != null) {
                    failed("release", error); // a later first attempt (DUP 0) with this identifier is still stored
                }
            });
        }
        return known;
    }

    /** Whether the identifier held a slot of the receive window that PUBREL frees. */
    boolean heldWindow(int packetId) {
        State s = ids.get(packetId);
        return s == State.STORED;
    }

    /**
     * Learns the identifiers the session's earlier connections left in Redis, then runs {@code next}
     * through the actor's mailbox ({@code tell}), before the client's packets are handled. If Redis
     * cannot tell, the session resumes with what this node remembers: a resend of a message stored
     * by a node that died may then be stored again (counted as {@code operation="load"}); refusing
     * the connection would make the client wait for Redis, which DESIGN.md keeps out of the node's
     * readiness.
     */
    void resume(Consumer<Runnable> tell, Runnable next) {
        if (receipts == null) {
            next.run();
            return;
        }
        redis(() -> receipts.pending(clientId)).whenComplete((pending, error) -> tell.accept(() -> {
            if (error != null) {
                failed("load", error);
            } else {
                for (Integer id : pending) {
                    ids.putIfAbsent(id, State.RESUMED); // what this node knows of an identifier stays
                }
            }
            next.run();
        }));
    }

    /** The connection ended and the session stays: its expiry counts from now. */
    void disconnected(long sessionExpirySeconds) {
        if (receipts != null && sessionExpirySeconds > 0 && !ids.isEmpty()) {
            redis(() -> receipts.touch(clientId, Duration.ofSeconds(sessionExpirySeconds))).whenComplete((ok, error) -> {
                if (error != null) {
                    failed("touch", error);
                }
            });
        }
    }

    /** Another node holds the session now; what is in Redis is its to read. */
    void movedAway() {
        ids.clear();
    }

    /** The session ended (or a clean start begins a new one): its QoS 2 state ends too. */
    void ended() {
        ids.clear();
    }

    /** Deletes the receipts stored in Redis for the client ID (only sessions that persist store them). */
    void deleteReceipts() {
        if (receipts != null) {
            redis(() -> receipts.delete(clientId)).whenComplete((ok, error) -> {
                if (error != null) {
                    failed("delete", error); // the receipts expire with their TTL
                }
            });
        }
    }

    /** A command whose failure, even one thrown at once (a client shut down), arrives as its result. */
    private static <T> CompletionStage<T> redis(Supplier<CompletionStage<T>> command) {
        try {
            return command.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void failed(String operation, Throwable error) {
        Counter.builder("fleetmq.qos2.receipts.failed")
                .description("Redis operations on QoS 2 receipts that failed; exactly once across a node's death is not assured for them")
                .tag("operation", operation)
                .register(meters)
                .increment();
        if (LOG_LIMIT.allow()) {
            log.warn("{}: QoS 2 receipt {} failed in Redis: {}{}",
                    ClientText.of(clientId), operation, error.toString(), LOG_LIMIT.suppressedNote());
        }
    }
}
