package io.fleetmq.bench.client;

import io.fleetmq.bench.report.ErrorKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One MQTT client connection with a clean session: the CONNECT and SUBSCRIBE handshakes, keep-alive,
 * and both sides of the QoS 1 and QoS 2 flows. What to publish and what to do with deliveries is up
 * to its {@link ClientRole}.
 *
 * <p>Everything after {@link #attach} runs on the channel's event loop, so the mutable state below
 * needs no locks; the futures and the {@code closing} flag are the only things other threads touch.
 */
public final class MqttConnection extends SimpleChannelInboundHandler<MqttMessage> {

    static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    private static final int KEEP_ALIVE_SECONDS = 60;
    private static final int SUBSCRIBE_PACKET_ID = 1;
    /** Reason codes of 0x80 and above are failures in every MQTT 5 acknowledgement. */
    private static final int FIRST_FAILURE_CODE = 0x80;

    private final String clientId;
    private final Protocol protocol;
    private final ClientRole role;
    private final ErrorSink errors;
    private final CompletableFuture<MqttConnection> connected = new CompletableFuture<>();

    private volatile Channel channel;
    private volatile boolean closing;
    private ScheduledFuture<?> connAckTimeout;
    private CompletableFuture<Void> pendingSubscribe;
    private int requestedQos;
    private String disconnectReason = "";
    // Both default to "no limit" and are only lowered by an MQTT 5 CONNACK.
    private int receiveMaximum = 65_535;
    private int maximumQos = 2;

    public MqttConnection(String clientId, Protocol protocol, ClientRole role, ErrorSink errors) {
        super(MqttMessage.class);
        this.clientId = clientId;
        this.protocol = protocol;
        this.role = role;
        this.errors = errors;
    }

    private long sessionExpiry;

    /** Connect with this Session Expiry Interval (MQTT 5): a persistent session. */
    public MqttConnection sessionExpiry(long seconds) {
        this.sessionExpiry = seconds;
        return this;
    }

    private Credentials credentials = Credentials.NONE;

    /** Connect with this user name and password instead of anonymously. */
    public MqttConnection credentials(Credentials credentials) {
        this.credentials = credentials;
        return this;
    }

    int keepAliveSeconds() {
        return KEEP_ALIVE_SECONDS;
    }

    /** Completes when the broker accepted the CONNECT; fails (and counts a connect failure) otherwise. */
    public CompletableFuture<MqttConnection> connected() {
        return connected;
    }

    /** The broker's Receive Maximum: how many QoS 1 and 2 publishes it takes unacknowledged [MQTT-3.3.4-7]. */
    public int receiveMaximum() {
        return receiveMaximum;
    }

    /** The highest QoS the broker supports (MQTT 5 CONNACK Maximum QoS; 2 when absent). */
    public int maximumQos() {
        return maximumQos;
    }

    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    public ByteBufAllocator alloc() {
        return channel.alloc();
    }

    public boolean isWritable() {
        return channel.isWritable();
    }

    /** Queues a publish without flushing; the caller flushes once per batch. Event loop only. */
    public void write(MqttPublishMessage publish) {
        channel.write(publish, channel.voidPromise());
    }

    public void flush() {
        channel.flush();
    }

    void attach(Channel channel) {
        this.channel = channel;
    }

    /**
     * Counts the failure before failing the future: whoever waits on it must find the error already
     * counted. Runs on the event loop only, so the check and the completion cannot interleave.
     */
    void failConnect(String reason) {
        if (!connected.isDone()) {
            errors.error(ErrorKind.CONNECT_FAILED, clientId + ": " + reason);
            connected.completeExceptionally(new ClientException(clientId + ": " + reason));
        }
    }

    /**
     * Subscribes to one filter; completes on a SUBACK that grants the requested QoS. A lower grant
     * fails too, because the run would then measure a different QoS than it claims.
     */
    public CompletableFuture<Void> subscribe(String filter, MqttQoS qos) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        channel.eventLoop().execute(() -> {
            pendingSubscribe = done;
            requestedQos = qos.value();
            channel.writeAndFlush(MqttMessageBuilders.subscribe()
                    .messageId(SUBSCRIBE_PACKET_ID)
                    .addSubscription(qos, filter)
                    .build());
            channel.eventLoop().schedule(() -> failSubscribe("no SUBACK within " + HANDSHAKE_TIMEOUT.toSeconds() + " s"),
                    HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        });
        return done;
    }

    /**
     * Sends DISCONNECT (normal disconnection) if connected, then closes. Any thread. Completes when the
     * channel is closed, at once for a connection that was never opened.
     */
    public CompletableFuture<Void> close() {
        closing = true;
        Channel ch = channel;
        CompletableFuture<Void> closed = new CompletableFuture<>();
        if (ch == null) {
            closed.complete(null);
            return closed;
        }
        ch.closeFuture().addListener(f -> closed.complete(null));
        ch.eventLoop().execute(() -> {
            if (ch.isActive() && connected.isDone() && !connected.isCompletedExceptionally()) {
                ch.writeAndFlush(MqttMessage.DISCONNECT).addListener(ChannelFutureListener.CLOSE);
            } else {
                ch.close();
            }
        });
        return closed;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(ConnectPacket.build(clientId, protocol, KEEP_ALIVE_SECONDS, sessionExpiry, credentials));
        connAckTimeout = ctx.executor().schedule(() -> {
            failConnect("no CONNACK within " + HANDSHAKE_TIMEOUT.toSeconds() + " s");
            closing = true;
            ctx.close();
        }, HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, MqttMessage msg) {
        if (msg.decoderResult().isFailure()) {
            protocolError(ctx, "undecodable packet: " + msg.decoderResult().cause());
            return;
        }
        MqttMessageType type = msg.fixedHeader().messageType();
        switch (type) {
            case CONNACK -> onConnAck(ctx, (MqttConnAckMessage) msg);
            case SUBACK -> onSubAck((MqttSubAckMessage) msg);
            case PUBLISH -> onPublish(ctx, (MqttPublishMessage) msg);
            case PUBACK, PUBREC, PUBCOMP -> onPublishReply(ctx, type, msg);
            case PUBREL -> ctx.write(reply(MqttMessageType.PUBCOMP, packetId(msg)));
            case PINGRESP -> {
                // keep-alive answered; nothing to do
            }
            case DISCONNECT -> onServerDisconnect(msg);
            default -> protocolError(ctx, "unexpected " + type + " from the broker");
        }
    }

    private void onConnAck(ChannelHandlerContext ctx, MqttConnAckMessage msg) {
        connAckTimeout.cancel(false);
        MqttConnectReturnCode code = msg.variableHeader().connectReturnCode();
        if (code != MqttConnectReturnCode.CONNECTION_ACCEPTED) {
            closing = true;
            failConnect(String.format("CONNACK refused: %s (0x%02X)", code, code.byteValue() & 0xFF));
            ctx.close();
            return;
        }
        MqttProperties properties = msg.variableHeader().properties();
        MqttProperties.MqttProperty<?> receiveMax = properties.getProperty(MqttProperties.RECEIVE_MAXIMUM);
        if (receiveMax != null) {
            receiveMaximum = (Integer) receiveMax.value();
        }
        MqttProperties.MqttProperty<?> maxQos = properties.getProperty(MqttProperties.MAXIMUM_QOS);
        if (maxQos != null) {
            maximumQos = (Integer) maxQos.value();
        }
        connected.complete(this);
    }

    private void onSubAck(MqttSubAckMessage msg) {
        if (pendingSubscribe == null) {
            errors.error(ErrorKind.PROTOCOL_ERROR, clientId + ": SUBACK without a SUBSCRIBE");
            return;
        }
        int code = msg.payload().reasonCodes().get(0);
        if (code >= FIRST_FAILURE_CODE) {
            failSubscribe(String.format("SUBACK refused (0x%02X)", code));
        } else if (code < requestedQos) {
            failSubscribe("SUBACK granted QoS " + code + " below the requested " + requestedQos);
        } else {
            pendingSubscribe.complete(null);
        }
    }

    private void failSubscribe(String reason) {
        if (pendingSubscribe != null && !pendingSubscribe.isDone()) {
            errors.error(ErrorKind.SUBSCRIBE_FAILED, clientId + ": " + reason);
            pendingSubscribe.completeExceptionally(new ClientException(clientId + ": " + reason));
        }
    }

    private void onPublish(ChannelHandlerContext ctx, MqttPublishMessage msg) {
        role.onPublish(msg, System.nanoTime());
        // Acknowledge after the role has seen it; written now, flushed with the batch in channelReadComplete.
        switch (msg.fixedHeader().qosLevel()) {
            case AT_LEAST_ONCE -> ctx.write(reply(MqttMessageType.PUBACK, msg.variableHeader().packetId()));
            case EXACTLY_ONCE -> ctx.write(reply(MqttMessageType.PUBREC, msg.variableHeader().packetId()));
            default -> {
                // QoS 0: nothing to acknowledge
            }
        }
    }

    private void onPublishReply(ChannelHandlerContext ctx, MqttMessageType type, MqttMessage msg) {
        long now = System.nanoTime();
        int packetId = packetId(msg);
        int reason = msg.variableHeader() instanceof MqttPubReplyMessageVariableHeader reply
                ? reply.reasonCode() & 0xFF
                : 0;
        if (reason >= FIRST_FAILURE_CODE) {
            errors.error(ErrorKind.PUBLISH_REJECTED, String.format("%s: %s with reason 0x%02X for packet %d",
                    clientId, type, reason, packetId));
            role.onPublishRejected(packetId, reason);
        } else if (type == MqttMessageType.PUBREC) {
            ctx.write(reply(MqttMessageType.PUBREL, packetId));
        } else {
            role.onPublishCompleted(packetId, now);
        }
    }

    private void onServerDisconnect(MqttMessage msg) {
        // MQTT 5 only: the broker says why before it closes; channelInactive counts the disconnect.
        if (msg.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader header) {
            disconnectReason = String.format(" (DISCONNECT reason 0x%02X)", header.reasonCode() & 0xFF);
        } else {
            disconnectReason = " (DISCONNECT)";
        }
    }

    private void protocolError(ChannelHandlerContext ctx, String what) {
        errors.error(ErrorKind.PROTOCOL_ERROR, clientId + ": " + what);
        ctx.close();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        role.onReadComplete();
        ctx.flush();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            role.onWritable();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        // Only writer idleness matters: the broker drops a client that sends nothing for 1.5 keep-alives
        // (MQTT 5 section 3.1.2.10), and a QoS 0 subscriber never writes otherwise.
        if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.WRITER_IDLE) {
            ctx.writeAndFlush(MqttMessage.PINGREQ);
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!closing) {
            errors.error(ErrorKind.IO_ERROR, clientId + ": " + cause);
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (connAckTimeout != null) {
            connAckTimeout.cancel(false);
        }
        if (!connected.isDone()) {
            failConnect("connection closed before CONNACK" + disconnectReason);
        } else if (!closing) {
            errors.error(ErrorKind.DISCONNECTED, clientId + ": connection lost" + disconnectReason);
        }
        failSubscribe("connection closed before SUBACK");
        role.onClosed();
        ctx.fireChannelInactive();
    }

    private static int packetId(MqttMessage msg) {
        return ((MqttMessageIdVariableHeader) msg.variableHeader()).messageId();
    }

    /**
     * PUBACK, PUBREC, PUBREL or PUBCOMP with just a packet ID: the only form in 3.1.1, and in MQTT 5 it
     * means reason code 0x00, success (section 3.4.2.1). PUBREL's fixed-header flags must be 0010 [MQTT-3.6.1-1],
     * which the codec writes from QoS 1.
     */
    static MqttMessage reply(MqttMessageType type, int packetId) {
        MqttQoS qos = type == MqttMessageType.PUBREL ? MqttQoS.AT_LEAST_ONCE : MqttQoS.AT_MOST_ONCE;
        return new MqttMessage(new MqttFixedHeader(type, false, qos, false, 0),
                MqttMessageIdVariableHeader.from(packetId));
    }
}
