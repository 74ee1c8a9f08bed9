package io.fleetmq.transport.mqtt;

import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolVersion;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.SharedSubscription;
import io.fleetmq.core.topic.TopicNames;
import io.fleetmq.session.ClientConnection;
import io.fleetmq.core.limit.PublishRate;
import io.fleetmq.transport.proxy.ProxyProtocol;
import io.fleetmq.transport.limits.ConnectionLimits;
import io.fleetmq.transport.limits.NodeLimits;
import io.fleetmq.transport.tls.ClientCertificates;
import io.fleetmq.session.SessionActor;
import io.fleetmq.session.SessionRegistry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.EncoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttIdentifierRejectedException;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttUnacceptableProtocolVersionException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One MQTT connection: validates what arrives, turns it into {@link Packet}s for the client's
 * session actor, and writes what the actor sends. Until CONNECT is accepted the connection has no
 * session; the first packet must be CONNECT [MQTT-3.1.0-1], and a connection that sends nothing
 * is closed after {@code connectTimeoutSeconds}.
 */
public final class MqttConnectionHandler extends ChannelInboundHandlerAdapter implements ClientConnection {

    private static final Logger log = LoggerFactory.getLogger(MqttConnectionHandler.class);

    /** How long a connection ending with a reason reads and discards what the client still sends. */
    static final long LINGER_MILLIS = 2_000;

    private final SessionRegistry sessions;
    private final int connectTimeoutSeconds;
    /** PUBLISH packets read and not yet settled by the session; reading pauses at {@link #maxUnsettled}. */
    private final AtomicInteger unsettled = new AtomicInteger();
    private final int maxUnsettled;
    private Channel channel;
    private volatile ProtocolVersion version = ProtocolVersion.V5;
    /** Set once CONNECT is accepted; from then on every packet goes to it. */
    private SessionActor actor;
    private boolean closing;
    private NodeLimits limits = FALLBACK_LIMITS;
    /** Why reading is paused, {@link #PAUSED_UNSETTLED} and/or {@link #PAUSED_WRITE}; event loop only. */
    private int paused;
    /** Set while reading waits for PUBLISH packets to settle; read by the session's thread. */
    private volatile boolean pausedUnsettled;

    private static final NodeLimits FALLBACK_LIMITS = NodeLimits.defaults();
    private static final int PAUSED_UNSETTLED = 1;
    private static final int PAUSED_WRITE = 2;
    private static final int PAUSED_RATE = 4;

    /** The client's publish rate; null when the node sets no limit. Event loop only. */
    private PublishRate publishRate;

    /** The client's verified certificate chain once read; null before. */
    private volatile List<X509Certificate> peerCertificates;

    public MqttConnectionHandler(SessionRegistry sessions, int connectTimeoutSeconds, int maxUnsettled) {
        this.sessions = sessions;
        this.connectTimeoutSeconds = connectTimeoutSeconds;
        this.maxUnsettled = Math.max(2, maxUnsettled);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        NodeLimits nodeLimits = channel.attr(NodeLimits.KEY).get();
        if (nodeLimits != null) {
            limits = nodeLimits;
        }
        ConnectionLimits l = limits.limits();
        if (l.maxPublishRate() > 0 || l.maxPublishBytesRate() > 0) {
            publishRate = new PublishRate(l.maxPublishRate(), l.maxPublishBytesRate(), System.nanoTime());
        }
        ctx.pipeline().addBefore(ctx.name(), "connectTimeout",
                new IdleStateHandler(connectTimeoutSeconds, 0, 0, TimeUnit.SECONDS));
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (closing) {
                return;
            }
            MqttMessage m = (MqttMessage) msg;
            if (!m.decoderResult().isSuccess()) {
                decodeFailure(m);
                return;
            }
            if (actor == null) {
                onConnect(m);
                return;
            }
            Packet packet = PacketMapper.inbound(m);
            TopicLimits.check(limits, packet);
            if (packet instanceof Packet.Publish p && publishRate != null) {
                limitRate(p);
            }
            if (!version.isV5()) {
                checkFiltersV311(packet);
            }
            if (packet instanceof Packet.Publish && unsettled.incrementAndGet() >= maxUnsettled) {
                pausedUnsettled = true;
                pause(PAUSED_UNSETTLED); // resumed by publishSettled()
                if (unsettled.get() <= maxUnsettled / 2) {
                    resumeIfSettled(); // settled meanwhile, before the flag was seen
                }
            }
            actor.packet(this, packet);
        } catch (ProtocolViolation v) {
            refuseOrDisconnect(v.reasonCode(), v.getMessage());
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    /**
     * 3.1.1 has no per-filter failure for a filter that breaks the wildcard rules: such a SUBSCRIBE
     * or UNSUBSCRIBE is a protocol violation that closes the connection [MQTT-4.7.1-1]
     * [MQTT-4.7.1-2] [MQTT-4.8.0-1]. (MQTT 5 answers 0x8F for that filter alone, in the session.)
     */
    private static void checkFiltersV311(Packet packet) {
        List<String> filters;
        if (packet instanceof Packet.Subscribe s) {
            filters = s.subscriptions().stream().map(Packet.TopicSubscription::filter).toList();
        } else if (packet instanceof Packet.Unsubscribe u) {
            filters = u.filters();
        } else {
            return;
        }
        for (String filter : filters) {
            try {
                SharedSubscription shared = SharedSubscription.parse(filter);
                TopicNames.validateTopicFilter(shared != null ? shared.filter() : filter);
            } catch (InvalidTopicException e) {
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "topic filter '" + filter + "': " + e.getMessage());
            }
        }
    }

    private void onConnect(MqttMessage m) {
        if (m.fixedHeader().messageType() != MqttMessageType.CONNECT) {
            close(); // [MQTT-3.1.0-1] the first packet must be CONNECT; nothing to answer with
            return;
        }
        MqttConnectMessage connectMessage = (MqttConnectMessage) m;
        ProtocolVersion v = ProtocolVersion.ofLevel(connectMessage.variableHeader().version());
        version = v;
        Packet.Connect connect = PacketMapper.connect(connectMessage, v);
        if (limits.tooManyConnections()) {
            limits.exceeded(NodeLimits.CONNECTIONS);
            refuseOrDisconnect(ReasonCode.QUOTA_EXCEEDED, "the node has its maximum of connections"); // 3.1.1: 3
            return;
        }
        if (!TopicLimits.clientIdFits(limits, connect.clientId())) {
            refuseOrDisconnect(ReasonCode.CLIENT_IDENTIFIER_NOT_VALID, "client identifier longer than "
                    + limits.limits().maxClientIdLength() + " bytes");
            return;
        }
        if (connect.will() != null) {
            try {
                TopicLimits.check(limits, connect.will().topic(), ReasonCode.TOPIC_NAME_INVALID);
            } catch (ProtocolViolation e) {
                if (v.isV5()) {
                    refuseOrDisconnect(e.reasonCode(), "will topic: " + e.getMessage());
                } else {
                    close(); // 3.1.1 has no return code for it
                }
                return;
            }
        }
        if (connect.clientId().isEmpty() && !v.isV5() && !connect.cleanStart()) {
            // [MQTT-3.1.3-8] 3.1.1: an empty client ID needs a clean session.
            refuseOrDisconnect(ReasonCode.CLIENT_IDENTIFIER_NOT_VALID, "empty client identifier needs clean session");
            return;
        }
        if (connect.will() != null) {
            try {
                TopicNames.validateTopicName(connect.will().topic());
            } catch (InvalidTopicException e) {
                refuseOrDisconnect(ReasonCode.TOPIC_NAME_INVALID, "will topic: " + e.getMessage());
                return;
            }
            if (connect.will().responseTopic() != null) {
                try {
                    TopicNames.validateTopicName(connect.will().responseTopic()); // [MQTT-3.3.2-14]
                } catch (InvalidTopicException e) {
                    refuseOrDisconnect(ReasonCode.PROTOCOL_ERROR, "will Response Topic: " + e.getMessage());
                    return;
                }
            }
        }
        channel.pipeline().remove("connectTimeout");
        actor = sessions.connect(connect, this);
    }

    private void decodeFailure(MqttMessage m) {
        Throwable cause = m.decoderResult().cause();
        if (cause instanceof InvalidPacketException invalid) {
            if (invalid.limit() != null) {
                limits.exceeded(invalid.limit());
                if (actor == null && invalid.connectVersion() == null) {
                    close(); // an unfinished packet before CONNECT: nothing to answer in
                    return;
                }
            }
            if (actor == null && invalid.connectVersion() != null) {
                version = invalid.connectVersion(); // answer the refused CONNECT in its own version
            }
            refuseOrDisconnect(invalid.reasonCode(), invalid.getMessage());
        } else if (cause instanceof MqttUnacceptableProtocolVersionException) {
            version = ProtocolVersion.V3_1_1; // answer in the format every version understands: return code 1
            // [MQTT-3.1.2-2] unsupported protocol level: CONNACK 0x84 (return code 1 for 3.1.1), then close.
            refuseOrDisconnect(ReasonCode.UNSUPPORTED_PROTOCOL_VERSION, cause.getMessage());
        } else if (cause instanceof MqttIdentifierRejectedException) {
            refuseOrDisconnect(ReasonCode.CLIENT_IDENTIFIER_NOT_VALID, cause.getMessage());
        } else if (cause != null && String.valueOf(cause.getMessage()).startsWith("invalid publish topic name")) {
            // The codec refuses wildcards in a PUBLISH topic itself; that has a reason code of its own.
            refuseOrDisconnect(ReasonCode.TOPIC_NAME_INVALID, cause.getMessage());
        } else if (cause instanceof TooLongFrameException) {
            refuseOrDisconnect(ReasonCode.PACKET_TOO_LARGE, "packet larger than the maximum packet size");
        } else {
            refuseOrDisconnect(ReasonCode.MALFORMED_PACKET, cause == null ? "malformed packet" : cause.getMessage());
        }
    }

    /**
     * Before CONNECT is accepted the answer is a CONNACK with the reason [MQTT-3.2.2-6]; after, a
     * DISCONNECT, which only MQTT 5 has [MQTT-4.13.1-1]; either way the connection closes.
     */
    private void refuseOrDisconnect(ReasonCode code, String reason) {
        log.debug("Closing {} ({}): {}", remoteAddress(), code, reason);
        closing = true;
        if (actor != null) {
            // The session ends the connection, in order with what it is sending, and publishes the will.
            actor.violation(this, code, reason);
            return;
        }
        if (!version.isV5() && (code == ReasonCode.MALFORMED_PACKET || code == ReasonCode.PROTOCOL_ERROR)) {
            // 3.1.1 [MQTT-3.1.4-1]: a CONNECT that does not conform closes the connection without CONNACK.
            close();
            return;
        }
        sendAndClose(Packet.ConnAck.refuse(code, reason));
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) {
            if (closing) {
                return; // already ending
            }
            if (actor == null) {
                close(); // no CONNECT in time
            } else {
                actor.keepAliveExpired(this);
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (closing) {
            ctx.fireChannelWritabilityChanged();
            return;
        }
        if (ctx.channel().isWritable()) {
            resume(PAUSED_WRITE);
            if (actor != null) {
                actor.writable(this);
            }
        } else {
            // Outbound bytes are bounded for every packet type: a client that sends (PINGREQ, PUBLISH
            // QoS 1, ...) without reading what it is answered is not read from until its buffer drains.
            limits.exceeded(NodeLimits.WRITE_BUFFER);
            pause(PAUSED_WRITE);
        }
        ctx.fireChannelWritabilityChanged();
    }

    /**
     * Beyond its publish rate a client is read from again only once it is back within it: TCP slows
     * it down and nothing it sent is refused. Or, if the node says so, it is disconnected with 0x96.
     */
    private void limitRate(Packet.Publish p) {
        long waitNanos = publishRate.take(p.payload().length, System.nanoTime());
        if (waitNanos <= 0) {
            return;
        }
        if (limits.limits().publishRateDisconnect()) {
            limits.exceeded(NodeLimits.PUBLISH_RATE);
            throw new ProtocolViolation(ReasonCode.MESSAGE_RATE_TOO_HIGH, "more than "
                    + limits.limits().maxPublishRate() + " PUBLISH or " + limits.limits().maxPublishBytesRate()
                    + " payload bytes per second");
        }
        if ((paused & PAUSED_RATE) != 0) {
            return; // already waiting; the packets Netty decoded before the pause add to the debt
        }
        limits.exceeded(NodeLimits.PUBLISH_RATE);
        pause(PAUSED_RATE);
        channel.eventLoop().schedule(() -> resume(PAUSED_RATE), waitNanos, TimeUnit.NANOSECONDS);
    }

    /** On the event loop: stop reading for {@code reason} (reading resumes when no reason is left). */
    private void pause(int reason) {
        paused |= reason;
        channel.config().setAutoRead(false);
    }

    private void resume(int reason) {
        if ((paused & reason) == 0) {
            return;
        }
        paused &= ~reason;
        if (paused == 0 && !closing) {
            channel.config().setAutoRead(true);
        }
    }

    /** On the event loop: reading paused for unsettled PUBLISH packets resumes once half have settled. */
    private void resumeIfSettled() {
        if (pausedUnsettled && unsettled.get() <= maxUnsettled / 2) {
            pausedUnsettled = false;
            resume(PAUSED_UNSETTLED);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (actor != null) {
            actor.connectionLost(this);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (isNodeFault(cause)) {
            // Not the client's doing (out of direct memory while writing to it, most likely): the
            // operator must hear of it, since the client only sees its connection close.
            log.warn("Connection {} of {} closed: {}", remoteAddress(),
                    actor == null ? "a client not yet connected" : ClientText.of(actor.clientId()), cause.toString());
        } else {
            log.debug("Connection {} failed: {}", remoteAddress(), cause.toString());
        }
        ctx.close();
    }

    /** An error of the JVM or a packet the node could not encode, as opposed to a network or client fault. */
    private static boolean isNodeFault(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof Error || t instanceof EncoderException) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ ClientConnection (any thread)

    @Override
    public void write(Packet packet) {
        // From the actor's thread each write becomes a task on the event loop that does not wake it;
        // the flush that follows does. Netty counts the bytes at once, so isWritable() sees them.
        channel.write(packet instanceof Packet.Publish p
                ? new PublishEncoder.Outbound(p, version.isV5())
                : PacketMapper.outbound(packet, version.isV5()), channel.voidPromise());
    }

    @Override
    public void flush() {
        channel.flush();
    }

    /**
     * With a last packet (a DISCONNECT or a refusing CONNACK, carrying the reason) the connection
     * is not closed at once: a socket closed while the client's bytes wait unread is reset, and a
     * reset can destroy the reason before the client reads it. So the packet goes out, then our
     * side of the stream ends, and what the client still sends is read and discarded until it
     * closes or {@link #LINGER_MILLIS} pass.
     */
    @Override
    public void sendAndClose(Packet last) {
        if (last == null || !channel.isActive()) {
            close();
            return;
        }
        channel.writeAndFlush(PacketMapper.outbound(last, version.isV5())).addListener(f -> {
            if (f.isSuccess()) {
                linger();
            } else {
                channel.close();
            }
        });
    }

    /** On the event loop: end our output, discard input, close after at most {@link #LINGER_MILLIS}. */
    private void linger() {
        closing = true;
        ChannelPipeline p = channel.pipeline();
        if (!channel.isActive() || !(channel instanceof DuplexChannel duplex) || p.get("mqttValidator") == null) {
            channel.close();
            return;
        }
        p.addBefore("mqttValidator", "discard", new DiscardInbound());
        channel.config().setAutoRead(true); // whatever paused reading: the client's bytes must be taken now
        duplex.shutdownOutput().addListener(f -> {
            if (!f.isSuccess()) {
                channel.close();
            }
        });
        channel.eventLoop().schedule(() -> {
            channel.close();
        }, LINGER_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Drops everything read while the connection lingers. */
    private static final class DiscardInbound extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }
    }

    private void close() {
        closing = true;
        channel.flush(); // what the session wrote before it decided to close
        channel.close();
    }

    @Override
    public void publishSettled() {
        if (unsettled.decrementAndGet() <= maxUnsettled / 2 && pausedUnsettled) {
            channel.eventLoop().execute(this::resumeIfSettled);
        }
    }

    @Override
    public boolean isWritable() {
        return channel.isWritable();
    }

    @Override
    public void keepAlive(int seconds) {
        if (seconds <= 0) {
            return;
        }
        channel.eventLoop().execute(() -> {
            if (channel.pipeline().get("keepAlive") == null && channel.isActive()) {
                // [MQTT-3.1.2-22] one and a half times the keep alive, without a packet from the client.
                long millis = seconds * 1500L;
                channel.pipeline().addBefore("connection", "keepAlive",
                        new IdleStateHandler(millis, 0, 0, TimeUnit.MILLISECONDS));
            }
        });
    }

    @Override
    public ProtocolVersion version() {
        return version;
    }

    @Override
    public String remoteAddress() {
        return channel == null ? "?" : String.valueOf(ProxyProtocol.clientAddress(channel));
    }

    @Override
    public java.net.InetAddress address() {
        // Behind a load balancer with the PROXY protocol: the client it names, not the balancer.
        return channel != null && ProxyProtocol.clientAddress(channel) instanceof java.net.InetSocketAddress a
                ? a.getAddress() : null;
    }

    @Override
    public boolean secure() {
        return channel != null && channel.pipeline().get(SslHandler.class) != null;
    }

    /**
     * The chain the TLS handshake verified (it ran before the CONNECT could be read), taken from the
     * TLS session of the connection, plain TLS or secure WebSocket alike, as the path from the
     * client's certificate to the trusted CA; read once, then kept.
     */
    @Override
    public List<X509Certificate> peerCertificates() {
        List<X509Certificate> known = peerCertificates;
        if (known == null) {
            known = readPeerCertificates();
            peerCertificates = known;
        }
        return known;
    }

    private List<X509Certificate> readPeerCertificates() {
        SslHandler ssl = channel == null ? null
                : channel.pipeline().get(SslHandler.class);
        if (ssl == null) {
            return List.of();
        }
        try {
            List<X509Certificate> presented = new ArrayList<>();
            for (Certificate c : ssl.engine().getSession().getPeerCertificates()) {
                if (c instanceof X509Certificate x509) {
                    presented.add(x509);
                }
            }
            if (presented.isEmpty()) {
                return List.of();
            }
            // What the client sent beyond its leaf counts only where it lies on the verified path.
            ClientCertificates trust = channel.attr(ClientCertificates.KEY).get();
            return trust != null ? trust.verifiedChain(presented) : List.of(presented.get(0));
        } catch (SSLPeerUnverifiedException e) {
            return List.of(); // no client certificate (client authentication off or optional)
        }
    }
}
