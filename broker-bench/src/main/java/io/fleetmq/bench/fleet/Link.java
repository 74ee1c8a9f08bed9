package io.fleetmq.bench.fleet;

import io.fleetmq.bench.client.ConnectPacket;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.report.ConnAckCodes;
import io.fleetmq.bench.report.FailureKind;
import io.fleetmq.bench.report.SubAckCodes;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One connection of a fleet device: CONNECT, CONNACK, SUBSCRIBE (unless the session came back),
 * SUBACK, then keep-alive until either side closes. Everything runs on the channel's event loop.
 *
 * <p>The outcome is decided when the channel's close future completes, which Netty does before it
 * fires {@code channelInactive}, and also for a TCP connect that failed and never became active: so
 * exactly one of served-then-lost, failed, or closed-by-us is reported for every connection.
 */
final class Link extends SimpleChannelInboundHandler<MqttMessage> {

    private static final int SUBSCRIBE_PACKET_ID = 1;
    private static final int FIRST_FAILURE_CODE = 0x80;

    private enum State { CONNECTING, SUBSCRIBING, SERVED, FAILED }

    private final Fleet fleet;
    private final FleetClient device;
    private final boolean cleanStart;
    private ChannelFuture opened;
    private State state = State.CONNECTING;
    private Failure failure;
    private ScheduledFuture<?> timeout;
    private String disconnectReason = "";
    private String lossReason;
    private Throwable cause;

    Link(Fleet fleet, FleetClient device, boolean cleanStart) {
        super(MqttMessage.class);
        this.fleet = fleet;
        this.device = device;
        this.cleanStart = cleanStart;
    }

    /** Called once right after the connect started: the outcome is decided when this channel closes. */
    void opened(ChannelFuture connect) {
        this.opened = connect;
        connect.channel().closeFuture().addListener(f -> closed());
    }

    /** Whether the device is served on this connection now (read by {@link FleetClient#close()} on the loop). */
    boolean served() {
        return state == State.SERVED;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(ConnectPacket.build(device.clientId(), fleet.options.protocol(), fleet.keepAliveSeconds(),
                fleet.options.sessionExpiry(), fleet.options.credentials(), cleanStart));
        timeout = ctx.executor().schedule(() -> fail(ctx, Failure.of(FailureKind.CONNACK_TIMEOUT,
                "no CONNACK within " + Fleet.HANDSHAKE_TIMEOUT.toSeconds() + " s")),
                Fleet.HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, MqttMessage msg) {
        if (msg.decoderResult().isFailure()) {
            protocolError(ctx, "undecodable packet", String.valueOf(msg.decoderResult().cause()));
            return;
        }
        MqttMessageType type = msg.fixedHeader().messageType();
        switch (type) {
            case CONNACK -> onConnAck(ctx, (MqttConnAckMessage) msg);
            case SUBACK -> onSubAck(ctx, (MqttSubAckMessage) msg);
            case PINGRESP -> fleet.stats().pings.increment();
            case PUBLISH -> onPublish(ctx, (MqttPublishMessage) msg);
            case PUBREL -> ctx.writeAndFlush(reply(MqttMessageType.PUBCOMP, packetId(msg)));
            case DISCONNECT -> disconnectReason = msg.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader h
                    ? String.format(" (DISCONNECT %s)", ConnAckCodes.hex(h.reasonCode() & 0xFF)) : " (DISCONNECT)";
            default -> protocolError(ctx, "unexpected " + type, "");
        }
    }

    private void onConnAck(ChannelHandlerContext ctx, MqttConnAckMessage msg) {
        if (state != State.CONNECTING) {
            protocolError(ctx, "second CONNACK", "");
            return;
        }
        cancelTimeout();
        int code = msg.variableHeader().connectReturnCode().byteValue() & 0xFF;
        if (code != 0) {
            fail(ctx, new Failure(FailureKind.CONNACK_REFUSED, code,
                    "CONNACK " + ConnAckCodes.describe(fleet.options.protocol(), code), ""));
            return;
        }
        fleet.stats().accepted.increment();
        if (!cleanStart && msg.variableHeader().isSessionPresent()) {
            serve(true);
            return;
        }
        state = State.SUBSCRIBING;
        MqttMessageBuilders.SubscribeBuilder subscribe = MqttMessageBuilders.subscribe()
                .messageId(SUBSCRIBE_PACKET_ID)
                .addSubscription(fleet.qos, fleet.topic(device.index));
        for (int j = 1; j < fleet.subscriptions(); j++) {
            subscribe.addSubscription(fleet.qos, fleet.topic(device.index) + "/" + j);
        }
        ctx.writeAndFlush(subscribe.build());
        timeout = ctx.executor().schedule(() -> fail(ctx, Failure.of(FailureKind.SUBACK_TIMEOUT,
                "no SUBACK within " + Fleet.HANDSHAKE_TIMEOUT.toSeconds() + " s")),
                Fleet.HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void onSubAck(ChannelHandlerContext ctx, MqttSubAckMessage msg) {
        if (state != State.SUBSCRIBING) {
            protocolError(ctx, "SUBACK without a SUBSCRIBE", "");
            return;
        }
        cancelTimeout();
        // The worst answer of the SUBSCRIBE's filters counts: a refusal, else the lowest grant.
        java.util.List<Integer> codes = msg.payload().reasonCodes();
        int code = codes.size() != fleet.subscriptions() ? FIRST_FAILURE_CODE : codes.get(0);
        for (int c : codes) {
            code = c >= FIRST_FAILURE_CODE || code >= FIRST_FAILURE_CODE ? Math.max(code, c) : Math.min(code, c);
        }
        if (code >= FIRST_FAILURE_CODE) {
            fail(ctx, new Failure(FailureKind.SUBACK_REFUSED, code,
                    "SUBACK " + SubAckCodes.describe(fleet.options.protocol(), code), ""));
        } else if (code < fleet.qos.value()) {
            // A lower grant would make the run hold other subscriptions than it claims.
            fail(ctx, new Failure(FailureKind.SUBACK_REFUSED, code,
                    "SUBACK granted QoS " + code + " below the requested " + fleet.qos.value(), ""));
        } else {
            serve(false);
        }
    }

    private void serve(boolean sessionPresent) {
        state = State.SERVED;
        device.failuresInRow = 0;
        FleetStats stats = fleet.stats();
        stats.served.increment();
        if (sessionPresent) {
            stats.sessionPresent.increment();
        }
        // Only a session that expires later than the connection can be resumed.
        device.resumeNextTime(fleet.options.sessionExpiry() > 0 && fleet.options.protocol() == Protocol.MQTT_5);
        fleet.events.served(device, sessionPresent, System.nanoTime());
    }

    private void onPublish(ChannelHandlerContext ctx, MqttPublishMessage msg) {
        fleet.stats().messages.increment();
        switch (msg.fixedHeader().qosLevel()) {
            case AT_LEAST_ONCE -> ctx.writeAndFlush(reply(MqttMessageType.PUBACK, msg.variableHeader().packetId()));
            case EXACTLY_ONCE -> ctx.writeAndFlush(reply(MqttMessageType.PUBREC, msg.variableHeader().packetId()));
            default -> {
                // QoS 0: nothing to acknowledge
            }
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent idle) {
            if (idle.state() == IdleState.WRITER_IDLE && (state == State.SERVED || state == State.SUBSCRIBING)) {
                ctx.writeAndFlush(MqttMessage.PINGREQ);
            } else if (idle.state() == IdleState.READER_IDLE && state == State.SERVED) {
                lossReason = "nothing from the broker for 1.5 x keep-alive (no PINGRESP)";
                ctx.close();
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (this.cause == null) {
            this.cause = cause;
        }
        ctx.close();
    }

    private void protocolError(ChannelHandlerContext ctx, String what, String detail) {
        if (state == State.SERVED) {
            lossReason = "protocol error: " + what;
            ctx.close();
        } else {
            fail(ctx, new Failure(FailureKind.PROTOCOL_ERROR, -1, "protocol error: " + what, detail));
        }
    }

    /** The first failure wins; the close that follows reports it. */
    private void fail(ChannelHandlerContext ctx, Failure f) {
        if (state == State.CONNECTING || state == State.SUBSCRIBING) {
            failure = f;
            state = State.FAILED;
        }
        cancelTimeout();
        ctx.close();
    }

    private void cancelTimeout() {
        if (timeout != null) {
            timeout.cancel(false);
            timeout = null;
        }
    }

    /** On the event loop, once the channel is closed, whoever closed it. */
    private void closed() {
        cancelTimeout();
        long now = System.nanoTime();
        String clientId = device.clientId();
        if (state == State.SERVED) {
            if (!device.closing()) {
                String reason = lossReason != null ? lossReason : "closed by the broker" + disconnectReason
                        + (cause == null ? "" : ": " + brief(cause));
                fleet.stats().lost(clientId, reason);
                fleet.events.lost(device, reason, now);
            }
            return;
        }
        if (failure == null) {
            if (opened.isDone() && !opened.isSuccess()) {
                failure = tcpFailure(opened.cause());
            } else {
                boolean connecting = state == State.CONNECTING;
                failure = new Failure(connecting ? FailureKind.CLOSED_BEFORE_CONNACK : FailureKind.CLOSED_BEFORE_SUBACK,
                        -1, (connecting ? "closed without any CONNACK" : "closed before SUBACK") + disconnectReason,
                        cause == null ? "" : brief(cause));
            }
            state = State.FAILED;
        }
        if (device.closing()) {
            return; // the tool ended the run; an attempt cut short by it is nobody's failure
        }
        device.failuresInRow++;
        fleet.stats().failed(clientId, failure);
        fleet.events.failed(device, failure, now);
    }

    /**
     * {@code finishConnect(..) failed with error(-111): Connection refused} and {@code connect(..) failed:
     * Connection refused: /127.0.0.1:1883} become {@code Connection refused}:
     * the same reason for every device, whatever its address.
     */
    static Failure tcpFailure(Throwable cause) {
        if (cause instanceof ConnectTimeoutException) {
            return new Failure(FailureKind.TCP_FAILED, -1, "TCP connect timed out", "");
        }
        return new Failure(FailureKind.TCP_FAILED, -1, "TCP connect failed: " + brief(cause), "");
    }

    static String brief(Throwable cause) {
        String m = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
        // Netty's native transport says which call failed and its errno before the system's words.
        m = m.replaceFirst("^\\S+\\(\\.\\.\\) failed(?: with error\\(-?\\d+\\))?: ", "");
        return m.replaceAll(":\\s*\\S*/\\S*$", "").strip();
    }

    private static int packetId(MqttMessage msg) {
        return ((MqttMessageIdVariableHeader) msg.variableHeader()).messageId();
    }

    /** PUBACK, PUBREC or PUBCOMP with just a packet ID: success in MQTT 5 too (section 3.4.2.1). */
    private static MqttMessage reply(MqttMessageType type, int packetId) {
        return new MqttMessage(new MqttFixedHeader(type, false, MqttQoS.AT_MOST_ONCE, false, 0),
                MqttMessageIdVariableHeader.from(packetId));
    }
}
