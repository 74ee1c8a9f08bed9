package io.fleetmq.transport.mqtt;

import io.fleetmq.transport.limits.ConnectionRate;
import io.fleetmq.transport.limits.NodeLimits;
import io.fleetmq.transport.proxy.ProxyProtocol;
import io.fleetmq.transport.proxy.ProxyRefusals;
import io.fleetmq.transport.tls.ClientCertificates;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.mqtt.MqttConstant;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.ssl.SslContext;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Pipeline of one MQTT connection: optional PROXY protocol header, optional TLS, optional WebSocket (path {@code /mqtt},
 * sub-protocols {@code mqtt} and {@code mqttv3.1}), framing and checking by {@link MqttPacketValidator}
 * bounded by the broker's maximum packet size, decoding by Netty's MQTT codec, then the connection
 * handler that owns the client.
 *
 * <p>The connection counts as writable until {@code maxWriteBuffer} bytes wait for its socket, and
 * again once half of that has gone out. Netty's default of 64 KiB is some 600 small PUBLISH
 * packets: a subscriber receiving from many publishers would then stall on every round trip from
 * "writable" through its session's mailbox and back to the event loop.
 */
public final class MqttChannelInitializer extends ChannelInitializer<Channel> {

    /** Path of the WebSocket endpoint, as most MQTT-over-WebSocket clients expect by default. */
    public static final String WEBSOCKET_PATH = "/mqtt";

    private final io.fleetmq.transport.tls.ServerTls tls;
    private final boolean webSocket;
    private final int maxPacketSize;
    private final WriteBufferWaterMark writeBuffer;
    private final Supplier<ChannelHandler> connectionHandler;
    private final NodeLimits limits;
    private final ConnectionRate rate;
    /** Whether the listener has stopped accepting for a moment (over its rate). */
    private final AtomicBoolean acceptPaused = new AtomicBoolean();
    private volatile java.util.Set<String> allowedOrigins = java.util.Set.of();
    private volatile ProxyRefusals proxyProtocol;
    private volatile Supplier<ChannelHandler> observer;

    /**
     * @param ssl               TLS context, or null for no TLS
     * @param webSocket         whether MQTT is carried in WebSocket frames
     * @param maxPacketSize     largest packet accepted, in bytes
     * @param maxWriteBuffer    bytes waiting for the socket at which the connection stops being writable
     * @param connectionHandler makes the handler of one new connection
     */
    public MqttChannelInitializer(SslContext ssl, boolean webSocket, int maxPacketSize, int maxWriteBuffer,
                                  Supplier<ChannelHandler> connectionHandler) {
        this(ssl, webSocket, maxPacketSize, maxWriteBuffer, connectionHandler, NodeLimits.defaults());
    }

    /**
     * @param limits the node's limits, shared by all its listeners; the rate of new connections is
     *               this listener's own
     */
    public MqttChannelInitializer(SslContext ssl, boolean webSocket, int maxPacketSize, int maxWriteBuffer,
                                  Supplier<ChannelHandler> connectionHandler, NodeLimits limits) {
        this(ssl, webSocket, maxPacketSize, maxWriteBuffer, connectionHandler, limits, ClientCertificates.none());
    }

    /**
     * @param clientCerts what {@code ssl} asks of client certificates (it must have been applied to
     *                    {@code ssl}); connections get it to rebuild the verified path of a client's chain
     */
    public MqttChannelInitializer(SslContext ssl, boolean webSocket, int maxPacketSize, int maxWriteBuffer,
                                  Supplier<ChannelHandler> connectionHandler, NodeLimits limits,
                                  ClientCertificates clientCerts) {
        this(ssl == null ? null : io.fleetmq.transport.tls.ServerTls.of(ssl, clientCerts), webSocket, maxPacketSize,
                maxWriteBuffer, connectionHandler, limits);
    }

    /**
     * @param tls the listener's TLS material, which may be renewed while it runs; null for no TLS
     */
    public MqttChannelInitializer(io.fleetmq.transport.tls.ServerTls tls, boolean webSocket, int maxPacketSize,
                                  int maxWriteBuffer, Supplier<ChannelHandler> connectionHandler, NodeLimits limits) {
        this.limits = limits;
        this.rate = new ConnectionRate(limits.limits().maxConnectionRate());
        this.tls = tls;
        this.webSocket = webSocket;
        this.maxPacketSize = maxPacketSize;
        this.writeBuffer = new WriteBufferWaterMark(maxWriteBuffer / 2, maxWriteBuffer);
        this.connectionHandler = connectionHandler;
    }

    /**
     * Browser pages from these origins may open WebSocket connections (empty: any); lower-cased,
     * compared with the {@code Origin} header of the upgrade request.
     */
    public MqttChannelInitializer allowedOrigins(java.util.Collection<String> origins) {
        this.allowedOrigins = origins.stream().map(o -> o.strip().toLowerCase(java.util.Locale.ROOT))
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
        return this;
    }

    /**
     * Every connection must start with a PROXY protocol header (version 1 or 2), in clear before
     * TLS; the client address it names replaces the socket's peer. Connections without one are
     * closed and counted in {@code refusals}. Null: no header expected (one would be bad MQTT).
     */
    public MqttChannelInitializer proxyProtocol(ProxyRefusals refusals) {
        this.proxyProtocol = refusals;
        return this;
    }

    /**
     * Each connection also gets a handler from {@code observer}, placed just before the connection
     * handler so it sees the decoded packets both ways (the node's connection meters); null for none.
     */
    public MqttChannelInitializer observer(Supplier<ChannelHandler> observer) {
        this.observer = observer;
        return this;
    }

    @Override
    protected void initChannel(Channel ch) {
        if (!rate.tryAcquire()) {
            // Over the listener's rate of new connections: the listener stops accepting until the next
            // one is due, so the rest wait in the kernel's accept queue and their clients see a slower
            // connect, never a connection closed without a reason code. This one, accepted already, is served.
            limits.exceeded(NodeLimits.CONNECTION_RATE);
            pauseAccepting(ch.parent());
        }
        limits.track(ch);
        ch.attr(NodeLimits.KEY).set(limits);
        ch.config().setWriteBufferWaterMark(writeBuffer);
        // A PUBLISH on its way to the event loop counts its bytes at once, as Netty's own messages do.
        ch.config().setMessageSizeEstimator(PublishEncoder.SIZE);
        ChannelPipeline p = ch.pipeline();
        ProxyRefusals proxy = proxyProtocol;
        if (proxy != null) {
            ProxyProtocol.install(p, proxy);
        }
        if (tls != null) {
            // One snapshot: the context and the client-certificate policy built with it.
            io.fleetmq.transport.tls.ServerTls.Material material = tls.material();
            p.addLast("tls", tls.newHandler(material, ch.alloc()));
            if (material.clientCertificates().enabled()) {
                ch.attr(ClientCertificates.KEY).set(material.clientCertificates());
            }
        }
        if (webSocket) {
            p.addLast("http", new HttpServerCodec())
                    .addLast("httpAggregator", new HttpObjectAggregator(64 * 1024))
                    .addLast("webSocketCheck", new WebSocketUpgradeCheck(allowedOrigins))
                    .addLast("webSocket", new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                            .websocketPath(WEBSOCKET_PATH)
                            .subprotocols("mqtt,mqttv3.1")
                            .maxFramePayloadLength(maxPacketSize + 5)
                            .allowMaskMismatch(false)
                            .build()))
                    .addLast("webSocketFrames", new WebSocketFrameCodec());
        }
        // The validator frames and checks each packet; Netty's decoder then decodes it, with strict
        // UTF-8 as a second line behind the validator's own check [MQTT-1.5.4-1].
        p.addLast("mqttValidator", new MqttPacketValidator(maxPacketSize, limits))
                .addLast("mqttDecoder", new MqttDecoder(maxPacketSize, MqttConstant.DEFAULT_MAX_CLIENT_ID_LENGTH, true))
                .addLast("mqttEncoder", MqttEncoder.INSTANCE)
                .addLast("publishEncoder", PublishEncoder.INSTANCE);
        Supplier<ChannelHandler> observe = observer;
        if (observe != null) {
            p.addLast("observer", observe.get());
        }
        p.addLast("connection", connectionHandler.get());
    }

    private void pauseAccepting(Channel listener) {
        if (listener == null || !acceptPaused.compareAndSet(false, true)) {
            return;
        }
        listener.config().setAutoRead(false);
        long delay = Math.max(TimeUnit.MILLISECONDS.toNanos(1), rate.nanosUntilNext());
        listener.eventLoop().schedule(() -> {
            acceptPaused.set(false);
            listener.config().setAutoRead(true);
        }, delay, TimeUnit.NANOSECONDS);
    }
}
