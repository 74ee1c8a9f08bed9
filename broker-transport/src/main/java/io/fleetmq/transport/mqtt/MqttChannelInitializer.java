package io.fleetmq.transport.mqtt;

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
import java.util.function.Supplier;

/**
 * Pipeline of one MQTT connection: optional TLS, optional WebSocket (path {@code /mqtt},
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

    private final SslContext ssl;
    private final boolean webSocket;
    private final int maxPacketSize;
    private final WriteBufferWaterMark writeBuffer;
    private final Supplier<ChannelHandler> connectionHandler;

    /**
     * @param ssl               TLS context, or null for no TLS
     * @param webSocket         whether MQTT is carried in WebSocket frames
     * @param maxPacketSize     largest packet accepted, in bytes
     * @param maxWriteBuffer    bytes waiting for the socket at which the connection stops being writable
     * @param connectionHandler makes the handler of one new connection
     */
    public MqttChannelInitializer(SslContext ssl, boolean webSocket, int maxPacketSize, int maxWriteBuffer,
                                  Supplier<ChannelHandler> connectionHandler) {
        this.ssl = ssl;
        this.webSocket = webSocket;
        this.maxPacketSize = maxPacketSize;
        this.writeBuffer = new WriteBufferWaterMark(maxWriteBuffer / 2, maxWriteBuffer);
        this.connectionHandler = connectionHandler;
    }

    @Override
    protected void initChannel(Channel ch) {
        ch.config().setWriteBufferWaterMark(writeBuffer);
        ChannelPipeline p = ch.pipeline();
        if (ssl != null) {
            p.addLast("tls", ssl.newHandler(ch.alloc()));
        }
        if (webSocket) {
            p.addLast("http", new HttpServerCodec())
                    .addLast("httpAggregator", new HttpObjectAggregator(64 * 1024))
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
        p.addLast("mqttValidator", new MqttPacketValidator(maxPacketSize))
                .addLast("mqttDecoder", new MqttDecoder(maxPacketSize, MqttConstant.DEFAULT_MAX_CLIENT_ID_LENGTH, true))
                .addLast("mqttEncoder", MqttEncoder.INSTANCE)
                .addLast("connection", connectionHandler.get());
    }
}
