package io.fleetmq.bench.connect;

import io.fleetmq.bench.client.ClientLoops;
import io.fleetmq.bench.client.ConnectPacket;
import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.client.Scram;
import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.run.Phases;
import io.netty.channel.ChannelFuture;
import io.netty.handler.ssl.SslContext;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One device that keeps reconnecting under the same client ID: a new connection and handshake as
 * soon as the previous one is closed, until the measured window is over. Attempts never overlap, so
 * the broker never sees this client ID twice at once.
 */
final class Connector {

    /**
     * After a handshake that got no CONNACK the next one waits this long, so that a broker that is down
     * or drowning is not hammered by a busy loop and the error count stays readable.
     */
    static final Duration PAUSE_AFTER_FAILURE = Duration.ofMillis(100);
    /** A CONNACK is small; anything near this is not one. */
    private static final int MAX_PACKET_BYTES = 64 * 1024;
    /** Never used: a connector closes long before the broker could miss a PINGREQ. */
    private static final int KEEP_ALIVE_SECONDS = 60;

    private final ClientLoops loops;
    private final String host;
    private final int port;
    private final String clientId;
    private final Protocol protocol;
    private final Credentials credentials;
    /** Null without TLS. */
    private final SslContext tls;
    /** Null without SCRAM; shared by all connectors, so the derived keys are computed once per run. */
    private final Scram scram;
    private final ConnectStats stats;
    private final Phases phases;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    Connector(ClientLoops loops, String host, int port, String clientId, Protocol protocol, Credentials credentials,
              SslContext tls, Scram scram, ConnectStats stats, Phases phases) {
        this.loops = loops;
        this.host = host;
        this.port = port;
        this.clientId = clientId;
        this.protocol = protocol;
        this.credentials = credentials;
        this.tls = tls;
        this.scram = scram;
        this.stats = stats;
        this.phases = phases;
    }

    /** Completes when the last handshake, begun before the window ended, is over. */
    CompletableFuture<Void> stopped() {
        return stopped;
    }

    void start() {
        next();
    }

    private void next() {
        if (phases.isOver(System.nanoTime())) {
            stopped.complete(null);
            return;
        }
        ConnectAttempt attempt;
        if (scram == null) {
            attempt = new ConnectAttempt(ConnectPacket.build(clientId, protocol, KEEP_ALIVE_SECONDS, 0, credentials));
        } else {
            Scram.Exchange exchange = scram.begin();
            attempt = new ConnectAttempt(ConnectPacket.enhanced(clientId, KEEP_ALIVE_SECONDS,
                    scram.algorithm().method(), exchange.clientFirst()), exchange);
        }
        ChannelFuture opened;
        try {
            opened = loops.open(host, port, attempt, MAX_PACKET_BYTES, tls);
        } catch (RuntimeException e) {
            // The event loops are shutting down: nothing more can be attempted.
            stats.error(ErrorKind.IO_ERROR, clientId + ": " + e);
            stopped.complete(null);
            return;
        }
        // A failed TCP connect fails this future before the channel's close completes (Netty fails the
        // promise, then closes), so the listener below always sees why.
        opened.channel().closeFuture().addListener(closed -> afterClose(opened, attempt));
    }

    /** On the channel's event loop. */
    private void afterClose(ChannelFuture opened, ConnectAttempt attempt) {
        ConnectAttempt.Outcome outcome = attempt.outcome();
        if (outcome instanceof ConnectAttempt.ConnAck ack) {
            stats.connAck(ack.code(), ack.sentNanos(), ack.receivedNanos());
            next();
            return;
        }
        if (opened.isDone() && !opened.isSuccess()) {
            stats.error(ErrorKind.CONNECT_FAILED, clientId + ": cannot open TCP connection to " + host + ":" + port
                    + ": " + opened.cause());
        } else if (outcome instanceof ConnectAttempt.Failure failure) {
            stats.error(failure.kind(), clientId + ": " + failure.reason());
        } else {
            stats.error(ErrorKind.CONNECT_FAILED, clientId + ": connection closed before CONNACK");
        }
        try {
            opened.channel().eventLoop().schedule(this::next, PAUSE_AFTER_FAILURE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RuntimeException shuttingDown) {
            stopped.complete(null);
        }
    }
}
