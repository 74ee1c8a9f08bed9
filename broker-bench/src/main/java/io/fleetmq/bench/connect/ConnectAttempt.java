package io.fleetmq.bench.connect;

import io.fleetmq.bench.client.Scram;
import io.fleetmq.bench.report.ErrorKind;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnAckVariableHeader;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One handshake on one fresh connection: CONNECT, wait for CONNACK, then DISCONNECT and close when
 * accepted, or just close when refused (the broker closes too [MQTT-3.2.2-7]). With SCRAM, the
 * broker's AUTH (Continue authentication) is answered with client-final, and an accepting CONNACK
 * counts only when it carries the server's proof [MQTT-4.12]. Everything runs on the channel's event
 * loop; the {@link Connector} reads {@link #outcome()} once the channel closed.
 */
final class ConnectAttempt extends SimpleChannelInboundHandler<MqttMessage> {

    static final Duration CONNACK_TIMEOUT = Duration.ofSeconds(10);

    /** How a handshake ended: a CONNACK code with its timing, or a failure without one. */
    sealed interface Outcome permits ConnAck, Failure {
    }

    record ConnAck(int code, long sentNanos, long receivedNanos) implements Outcome {
    }

    record Failure(ErrorKind kind, String reason) implements Outcome {
    }

    private static final byte CONTINUE_AUTHENTICATION = 0x18;

    private final MqttConnectMessage connect;
    /** Null for a CONNECT without enhanced authentication. */
    private final Scram.Exchange scram;
    private Outcome outcome;
    private long sentNanos;
    private ScheduledFuture<?> timeout;
    private String disconnectReason = "";
    private Throwable cause;

    ConnectAttempt(MqttConnectMessage connect) {
        this(connect, null);
    }

    ConnectAttempt(MqttConnectMessage connect, Scram.Exchange scram) {
        super(MqttMessage.class);
        this.connect = connect;
        this.scram = scram;
    }

    /** Null while the handshake is still open; set once, on the event loop. */
    Outcome outcome() {
        return outcome;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        sentNanos = System.nanoTime();
        ctx.writeAndFlush(connect);
        timeout = ctx.executor().schedule(() -> {
            end(new Failure(ErrorKind.CONNECT_FAILED, "no CONNACK within " + CONNACK_TIMEOUT.toSeconds() + " s"));
            ctx.close();
        }, CONNACK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, MqttMessage msg) {
        if (msg.decoderResult().isFailure()) {
            end(new Failure(ErrorKind.PROTOCOL_ERROR, "undecodable packet: " + msg.decoderResult().cause()));
            ctx.close();
            return;
        }
        MqttMessageType type = msg.fixedHeader().messageType();
        if (type == MqttMessageType.CONNACK && outcome == null) {
            long now = System.nanoTime();
            MqttConnAckVariableHeader header = ((MqttConnAckMessage) msg).variableHeader();
            int code = header.connectReturnCode().byteValue() & 0xFF;
            if (code == 0 && scram != null && !scram.serverVerified(authenticationData(header.properties()))) {
                end(new Failure(ErrorKind.PROTOCOL_ERROR, "CONNACK without a valid SCRAM server signature"));
                ctx.close();
                return;
            }
            end(new ConnAck(code, sentNanos, now));
            if (code == 0) {
                ctx.writeAndFlush(MqttMessage.DISCONNECT).addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.close();
            }
        } else if (type == MqttMessageType.AUTH && scram != null && outcome == null) {
            continueAuthentication(ctx, (MqttReasonCodeAndPropertiesVariableHeader) msg.variableHeader());
        } else if (type == MqttMessageType.DISCONNECT && outcome == null) {
            // MQTT 5: a broker may say why before closing; channelInactive reports the failure.
            disconnectReason = msg.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader header
                    ? String.format(" (DISCONNECT reason 0x%02X)", header.reasonCode() & 0xFF)
                    : " (DISCONNECT)";
        } else if (outcome == null) {
            end(new Failure(ErrorKind.PROTOCOL_ERROR, "unexpected " + type + " before CONNACK"));
            ctx.close();
        }
        // After the CONNACK the connection is closing; whatever else arrives is of no interest.
    }

    /** Server-first in, client-final out. */
    private void continueAuthentication(ChannelHandlerContext ctx, MqttReasonCodeAndPropertiesVariableHeader header) {
        if (header.reasonCode() != CONTINUE_AUTHENTICATION) {
            end(new Failure(ErrorKind.PROTOCOL_ERROR, String.format("AUTH 0x%02X before CONNACK", header.reasonCode())));
            ctx.close();
            return;
        }
        byte[] clientFinal;
        try {
            clientFinal = scram.clientFinal(authenticationData(header.properties()));
        } catch (RuntimeException e) {
            end(new Failure(ErrorKind.PROTOCOL_ERROR, "unusable SCRAM server-first: " + e.getMessage()));
            ctx.close();
            return;
        }
        MqttProperties props = new MqttProperties();
        props.add(new MqttProperties.StringProperty(MqttProperties.AUTHENTICATION_METHOD,
                (String) connect.variableHeader().properties().getProperty(MqttProperties.AUTHENTICATION_METHOD).value()));
        props.add(new MqttProperties.BinaryProperty(MqttProperties.AUTHENTICATION_DATA, clientFinal));
        ctx.writeAndFlush(MqttMessageBuilders.auth().reasonCode(CONTINUE_AUTHENTICATION).properties(props).build());
    }

    private static byte[] authenticationData(MqttProperties props) {
        MqttProperties.MqttProperty<?> data = props.getProperty(MqttProperties.AUTHENTICATION_DATA);
        return data == null ? new byte[0] : (byte[]) data.value();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (this.cause == null) {
            this.cause = cause;
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        end(new Failure(ErrorKind.CONNECT_FAILED, "connection closed before CONNACK" + disconnectReason
                + (cause == null ? "" : ": " + cause)));
        ctx.fireChannelInactive();
    }

    /** The first ending wins; later ones (the close after a CONNACK or a time-out) change nothing. */
    private void end(Outcome ending) {
        if (outcome == null) {
            outcome = ending;
        }
        if (timeout != null) {
            timeout.cancel(false);
        }
    }
}
