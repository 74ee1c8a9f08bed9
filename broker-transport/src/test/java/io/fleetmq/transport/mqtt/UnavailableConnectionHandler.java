package io.fleetmq.transport.mqtt;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttVersion;

/**
 * Test stand-in for the connection handler: answers every CONNECT with "Server unavailable" (0x88 for MQTT 5, return code 3 for 3.1.1) and
 * closes: the listener is up and reachable, but this node does not serve sessions on it. Anything
 * else, including a packet that does not decode, closes the connection.
 */
@ChannelHandler.Sharable
final class UnavailableConnectionHandler extends SimpleChannelInboundHandler<MqttMessage> {

    static final UnavailableConnectionHandler INSTANCE = new UnavailableConnectionHandler();

    private UnavailableConnectionHandler() {
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, MqttMessage msg) {
        if (msg.decoderResult().isSuccess() && msg instanceof MqttConnectMessage connect) {
            boolean v5 = connect.variableHeader().version() == MqttVersion.MQTT_5.protocolLevel();
            MqttConnAckMessage connAck = MqttMessageBuilders.connAck()
                    .returnCode(v5 ? MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE_5
                            : MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE)
                    .sessionPresent(false)
                    .build();
            ctx.writeAndFlush(connAck).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.close();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
