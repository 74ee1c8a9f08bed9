package io.fleetmq.transport.mqtt;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

/**
 * Checks a WebSocket upgrade before it is accepted: the client must ask for the {@code mqtt}
 * sub-protocol ({@code mqttv3.1} for old clients) [MQTT-6.0.0-3], and a browser page (which always
 * sends {@code Origin}) must come from an allowed origin when a list is configured. Clients outside
 * browsers send no {@code Origin} and are not affected. Refused upgrades get 403 or 400 and the
 * connection closes.
 */
final class WebSocketUpgradeCheck extends ChannelInboundHandlerAdapter {

    private final Set<String> allowedOrigins;

    /** @param allowedOrigins origins such as {@code https://console.example.com}, lower case; empty allows any */
    WebSocketUpgradeCheck(Set<String> allowedOrigins) {
        this.allowedOrigins = allowedOrigins;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        if (origin != null && !allowedOrigins.isEmpty()
                && !allowedOrigins.contains(origin.strip().toLowerCase(Locale.ROOT))) {
            refuse(ctx, request, HttpResponseStatus.FORBIDDEN, "origin " + origin + " is not allowed");
            return;
        }
        if (!asksForMqtt(request.headers().get(HttpHeaderNames.SEC_WEBSOCKET_PROTOCOL))) {
            refuse(ctx, request, HttpResponseStatus.BAD_REQUEST, "the WebSocket sub-protocol must be mqtt");
            return;
        }
        ctx.pipeline().remove(this); // one upgrade per connection
        ctx.fireChannelRead(msg);
    }

    private static boolean asksForMqtt(String protocols) {
        if (protocols == null) {
            return false;
        }
        for (String p : protocols.split(",")) {
            String name = p.strip().toLowerCase(Locale.ROOT);
            if (name.equals("mqtt") || name.equals("mqttv3.1")) {
                return true;
            }
        }
        return false;
    }

    private static void refuse(ChannelHandlerContext ctx, FullHttpRequest request, HttpResponseStatus status,
            String why) {
        ReferenceCountUtil.release(request);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(why + "\n", StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        response.headers().set(HttpHeaderNames.CONNECTION, "close");
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}
