package io.fleetmq.bench.run;

import io.fleetmq.bench.client.ClientRole;
import io.fleetmq.bench.client.MqttConnection;
import io.fleetmq.bench.client.PayloadStamp;
import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.scenario.Topology;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Publishes stamped messages on one connection until the measured window ends.
 *
 * <p>Two modes. Paced ({@code ratePerSecond > 0}): a timer sends whatever the schedule says is due,
 * catching up after a stall, so a broker that cannot keep up shows as a published rate below target.
 * Unpaced: sends as long as the socket is writable and, for QoS 1 and 2, fewer than {@code window}
 * publishes await their acknowledgement; each acknowledgement or writability change sends more.
 *
 * <p>All state is confined to the connection's event loop.
 */
final class Publisher implements ClientRole {

    /** Publishes per turn on the event loop before yielding to the other connections on it. */
    private static final int MAX_BATCH = 64;
    /** Finer timers cost more than they smooth; above 1000 msg/s per publisher, send small bursts. */
    private static final long MIN_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Topology.Publisher spec;
    private final MqttQoS qos;
    private final int payloadBytes;
    private final double ratePerSecond;
    private final int inflightLimit;
    private final RunStats stats;
    private MqttConnection connection;

    private Phases phases;
    private boolean running;
    private boolean pumpQueued;
    private ScheduledFuture<?> ticker;
    private long pacingOrigin;
    private long sent;
    private int sequence;
    // QoS 1/2 flow state, indexed by packet ID 1 .. window.
    private int window;
    private int inFlight;
    private int nextPacketId = 1;
    private boolean[] pending;
    private long[] sentAt;

    Publisher(Topology.Publisher spec, MqttQoS qos, int payloadBytes, double ratePerSecond, int inflightLimit,
              RunStats stats) {
        this.spec = spec;
        this.qos = qos;
        this.payloadBytes = payloadBytes;
        this.ratePerSecond = ratePerSecond;
        this.inflightLimit = inflightLimit;
        this.stats = stats;
    }

    void bind(MqttConnection connection) {
        this.connection = connection;
    }

    /** Starts publishing on the connection's event loop. */
    void start(Phases phases) {
        connection.eventLoop().execute(() -> {
            this.phases = phases;
            if (qos != MqttQoS.AT_MOST_ONCE) {
                // The broker's Receive Maximum is a hard limit [MQTT-3.3.4-7]; ours is a choice.
                window = Math.max(1, Math.min(inflightLimit, connection.receiveMaximum()));
                pending = new boolean[window + 1];
                sentAt = new long[window + 1];
            } else {
                window = Integer.MAX_VALUE;
            }
            running = true;
            pacingOrigin = System.nanoTime();
            if (ratePerSecond > 0) {
                long tick = Math.max(MIN_TICK_NANOS, (long) (1e9 / ratePerSecond));
                // A random phase per publisher so that a hundred timers do not fire in lockstep.
                long offset = ThreadLocalRandom.current().nextLong(tick);
                ticker = connection.eventLoop().scheduleAtFixedRate(this::pump, offset, tick, TimeUnit.NANOSECONDS);
            } else {
                pump();
            }
        });
    }

    /** Stops publishing; completes on the event loop once no further publish can be written. */
    CompletableFuture<Void> stop() {
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        connection.eventLoop().execute(() -> {
            halt();
            stopped.complete(null);
        });
        return stopped;
    }

    private void halt() {
        running = false;
        if (ticker != null) {
            ticker.cancel(false);
        }
    }

    private void pump() {
        if (!running) {
            return;
        }
        if (phases.isOver(System.nanoTime())) {
            halt();
            return;
        }
        long allowance = ratePerSecond > 0 ? due(System.nanoTime()) - sent : MAX_BATCH;
        int batch = (int) Math.min(allowance, MAX_BATCH);
        int written = 0;
        while (written < batch && inFlight < window && connection.isWritable()) {
            publishOne();
            written++;
        }
        if (written > 0) {
            connection.flush();
        }
        // Unpaced and not blocked: go on, but behind the other connections' work on this loop.
        if (ratePerSecond == 0 && written == batch && !pumpQueued) {
            pumpQueued = true;
            connection.eventLoop().execute(() -> {
                pumpQueued = false;
                pump();
            });
        }
    }

    /** Messages the schedule expects by {@code now}, counted from the start of publishing. */
    private long due(long now) {
        return (long) ((now - pacingOrigin) * ratePerSecond / 1e9);
    }

    private void publishOne() {
        int packetId = qos == MqttQoS.AT_MOST_ONCE ? 0 : nextFreePacketId();
        ByteBuf payload = connection.alloc().buffer(payloadBytes);
        // The stamp is taken as late as possible: the message is encoded and written right after.
        long stampNanos = System.nanoTime();
        new PayloadStamp(stampNanos, spec.id(), sequence++).writeTo(payload, payloadBytes);
        if (packetId != 0) {
            pending[packetId] = true;
            sentAt[packetId] = stampNanos;
            inFlight++;
        }
        // Built directly, not with MqttMessageBuilders.publish(): that builder copies the payload into a
        // new heap buffer and never releases the one it was given, a leak and a copy per message.
        connection.write(new MqttPublishMessage(
                new MqttFixedHeader(MqttMessageType.PUBLISH, false, qos, false, 0),
                new MqttPublishVariableHeader(spec.topic(), packetId, MqttProperties.NO_PROPERTIES),
                payload));
        sent++;
        stats.published(stampNanos);
    }

    /** Packet IDs are non-zero [MQTT-2.2.1-3]; cycling 1 .. window finds a free one whenever inFlight < window. */
    private int nextFreePacketId() {
        for (int tries = 0; tries < window; tries++) {
            int id = nextPacketId;
            nextPacketId = id == window ? 1 : id + 1;
            if (!pending[id]) {
                return id;
            }
        }
        throw new IllegalStateException("no free packet ID with " + inFlight + " of " + window + " in flight");
    }

    @Override
    public void onPublishCompleted(int packetId, long nowNanos) {
        if (release(packetId)) {
            stats.acknowledged(sentAt[packetId], nowNanos);
        }
    }

    @Override
    public void onPublishRejected(int packetId, int reasonCode) {
        release(packetId);
    }

    private boolean release(int packetId) {
        if (pending == null || packetId < 1 || packetId > window || !pending[packetId]) {
            stats.error(ErrorKind.PROTOCOL_ERROR, spec.clientId() + ": acknowledgement for packet " + packetId
                    + ", which is not in flight");
            return false;
        }
        pending[packetId] = false;
        inFlight--;
        return true;
    }

    @Override
    public void onReadComplete() {
        pump();
    }

    @Override
    public void onWritable() {
        pump();
    }

    @Override
    public void onClosed() {
        halt();
    }
}
