package io.fleetmq.transport.mqtt;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.util.List;

/**
 * Carries the MQTT byte stream in binary WebSocket frames. An MQTT packet may span frames and a
 * frame may hold several packets, so frames are unwrapped into a plain stream for the MQTT decoder.
 * Text frames are not allowed for MQTT and close the connection.
 */
final class WebSocketFrameCodec extends MessageToMessageCodec<WebSocketFrame, ByteBuf> {

    @Override
    protected void encode(ChannelHandlerContext ctx, ByteBuf msg, List<Object> out) {
        out.add(new BinaryWebSocketFrame(msg.retain()));
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, WebSocketFrame frame, List<Object> out) {
        if (frame instanceof BinaryWebSocketFrame || frame instanceof ContinuationWebSocketFrame) {
            out.add(frame.content().retain());
        } else {
            // [MQTT-6.0.0-1] MQTT control packets must be sent in binary data frames.
            ctx.close();
        }
    }
}
