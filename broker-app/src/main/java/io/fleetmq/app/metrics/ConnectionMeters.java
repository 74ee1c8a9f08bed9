package io.fleetmq.app.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The MQTT connections of one listener, told apart by protocol version:
 * {@code fleetmq_connections{listener,protocol}} (connections whose CONNECT was accepted and that
 * are still open), {@code fleetmq_connects_total{listener,protocol}} (accepted CONNECTs) and
 * {@code fleetmq_disconnects_total{reason}} (how accepted connections ended, from a fixed set).
 *
 * <p>A small handler per connection watches the decoded packets between the codec and the
 * connection handler: it compares a packet type per packet and touches a meter only on CONNECT,
 * CONNACK, DISCONNECT and close, all resolved when the listener binds, so the message path pays
 * nothing but a type check. Refused CONNECTs are counted by {@code fleetmq_connections_refused_total}.
 */
public final class ConnectionMeters {

    /** Protocol tags by the CONNECT's protocol level (3, 4, 5); anything else is refused before CONNACK. */
    private static final String[] PROTOCOLS = {"3.1", "3.1.1", "5"};

    /** Disconnect reasons, a fixed set: the client's own, the server's (by MQTT 5 reason code) and silent closes. */
    public enum Reason {
        /** The client sent DISCONNECT with reason code 0. */
        CLIENT_NORMAL,
        /** The client sent DISCONNECT with reason code 4 (disconnect with will message). */
        CLIENT_WITH_WILL,
        /** The client sent DISCONNECT with an error reason code. */
        CLIENT_ERROR,
        /** The server sent DISCONNECT 0x8E: another connection took the session over. */
        SESSION_TAKEN_OVER,
        /** The server sent DISCONNECT 0x8D: keep alive timeout. */
        KEEP_ALIVE_TIMEOUT,
        /** The server sent DISCONNECT 0x8B: the node shuts down. */
        SERVER_SHUTTING_DOWN,
        /** The server sent DISCONNECT 0x9C or 0x9D: the client should use another node (drain). */
        USE_ANOTHER_SERVER,
        /** The server sent DISCONNECT 0x98: an operator closed the connection. */
        ADMINISTRATIVE_ACTION,
        /** The server sent DISCONNECT 0x87: not authorized (credential revoked or expired). */
        NOT_AUTHORIZED,
        /** The server sent DISCONNECT 0x81, 0x82, 0x94 or 0x93: the client broke the protocol. */
        PROTOCOL_ERROR,
        /** The server sent DISCONNECT 0x95, 0x96 or 0x97: the client exceeded a limit. */
        LIMIT_EXCEEDED,
        /** The server sent DISCONNECT with another reason code. */
        SERVER_OTHER,
        /** The connection closed without a DISCONNECT either way (network loss, MQTT 3 keep alive, ...). */
        CONNECTION_CLOSED;

        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        static Reason server(int code) {
            return switch (code) {
                case 0x8E -> SESSION_TAKEN_OVER;
                case 0x8D -> KEEP_ALIVE_TIMEOUT;
                case 0x8B -> SERVER_SHUTTING_DOWN;
                case 0x9C, 0x9D -> USE_ANOTHER_SERVER;
                case 0x98 -> ADMINISTRATIVE_ACTION;
                case 0x87 -> NOT_AUTHORIZED;
                case 0x81, 0x82, 0x93, 0x94 -> PROTOCOL_ERROR;
                case 0x95, 0x96, 0x97 -> LIMIT_EXCEEDED;
                default -> SERVER_OTHER;
            };
        }

        static Reason client(int code) {
            return switch (code) {
                case 0 -> CLIENT_NORMAL;
                case 4 -> CLIENT_WITH_WILL;
                default -> CLIENT_ERROR;
            };
        }
    }

    private final AtomicLong[] open = new AtomicLong[PROTOCOLS.length];
    private final Counter[] connects = new Counter[PROTOCOLS.length];
    private final Counter[] disconnects;

    /**
     * @param listener the listener's name as a tag: {@code tcp}, {@code tls}, {@code ws} or {@code wss}
     * @param disconnects the node's disconnect counters, shared by its listeners ({@link #disconnectCounters})
     */
    public ConnectionMeters(MeterRegistry meters, String listener, Counter[] disconnects) {
        this.disconnects = disconnects;
        for (int i = 0; i < PROTOCOLS.length; i++) {
            open[i] = new AtomicLong();
            Gauge.builder("fleetmq.connections", open[i], AtomicLong::get)
                    .description("Open MQTT connections whose CONNECT was accepted")
                    .tag("listener", listener).tag("protocol", PROTOCOLS[i]).register(meters);
            connects[i] = Counter.builder("fleetmq.connects").description("MQTT CONNECTs accepted")
                    .tag("listener", listener).tag("protocol", PROTOCOLS[i]).register(meters);
        }
    }

    /** One counter per {@link Reason}, in its order: {@code fleetmq_disconnects_total{reason}}. */
    public static Counter[] disconnectCounters(MeterRegistry meters) {
        Reason[] reasons = Reason.values();
        Counter[] counters = new Counter[reasons.length];
        for (Reason r : reasons) {
            counters[r.ordinal()] = Counter.builder("fleetmq.disconnects")
                    .description("Accepted MQTT connections that ended, by reason").tag("reason", r.tag())
                    .register(meters);
        }
        return counters;
    }

    /** Makes the handler of one new connection. */
    public Supplier<ChannelHandler> handlers() {
        return Watcher::new;
    }

    /** Open connections of this listener, all protocols. */
    public long open() {
        long n = 0;
        for (AtomicLong a : open) {
            n += a.get();
        }
        return n;
    }

    /** Watches one connection; not sharable (it remembers the connection's protocol and state). */
    private final class Watcher extends ChannelDuplexHandler {
        private int protocol = -1;
        private boolean accepted;
        private Reason reason;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            if (msg instanceof MqttMessage m && m.fixedHeader() != null) {
                MqttMessageType type = m.fixedHeader().messageType();
                if (type == MqttMessageType.CONNECT && protocol < 0 && msg instanceof MqttConnectMessage c) {
                    int level = c.variableHeader().version();
                    protocol = level >= 3 && level <= 5 ? level - 3 : -1;
                } else if (type == MqttMessageType.DISCONNECT && accepted && reason == null) {
                    reason = Reason.client(m.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader h
                            ? h.reasonCode() & 0xFF : 0);
                }
            }
            super.channelRead(ctx, msg);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            if (msg instanceof MqttMessage m && m.fixedHeader() != null) {
                MqttMessageType type = m.fixedHeader().messageType();
                if (type == MqttMessageType.CONNACK && !accepted && protocol >= 0 && msg instanceof MqttConnAckMessage a
                        && a.variableHeader().connectReturnCode() == MqttConnectReturnCode.CONNECTION_ACCEPTED) {
                    accepted = true;
                    open[protocol].incrementAndGet();
                    connects[protocol].increment();
                } else if (type == MqttMessageType.DISCONNECT && accepted && reason == null
                        && m.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader h) {
                    reason = Reason.server(h.reasonCode() & 0xFF);
                }
            }
            super.write(ctx, msg, promise);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (accepted) {
                accepted = false;
                open[protocol].decrementAndGet();
                disconnects[(reason == null ? Reason.CONNECTION_CLOSED : reason).ordinal()].increment();
            }
            super.channelInactive(ctx);
        }
    }
}
