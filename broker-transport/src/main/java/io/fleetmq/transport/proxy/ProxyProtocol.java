package io.fleetmq.transport.proxy;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.haproxy.HAProxyMessageDecoder;
import io.netty.util.AttributeKey;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * The PROXY protocol (versions 1 and 2) on an MQTT listener behind a TCP load balancer: the
 * balancer opens each connection with a header that names the client it accepted, and that client
 * becomes the connection's address for authentication, blocked-IP rules, the refused-connections
 * log and the admin API. Without it every client would seem to come from the balancer.
 *
 * <p>A listener that expects the header takes nothing else first: a connection whose first bytes
 * are not a header, or whose header is malformed, is closed (see {@link ProxyRefusals}). The header
 * comes before TLS and before the WebSocket upgrade, as balancers send it in clear. A header that
 * never ends leaves the connection silent for the MQTT layer, which closes it after the connect
 * timeout as it does any connection that sends no CONNECT; the decoder also bounds the header's size.
 */
public final class ProxyProtocol {

    /** Channel attribute holding the client's address as the PROXY header gave it. */
    public static final AttributeKey<InetSocketAddress> SOURCE = AttributeKey.valueOf("fleetmq.proxySource");

    private ProxyProtocol() {
    }

    /** Puts the header's check, decoder and reader first in {@code pipeline}; each leaves after the header. */
    public static void install(ChannelPipeline pipeline, ProxyRefusals refusals) {
        pipeline.addFirst("proxyHeader", new ProxyHeaderHandler(refusals))
                .addFirst("proxyDecoder", new HAProxyMessageDecoder())
                .addFirst("proxyCheck", new ProxyHeaderCheck(refusals));
    }

    /**
     * The client's address: the one from the PROXY header when the listener takes it and the
     * header named one, else the socket's peer.
     */
    public static SocketAddress clientAddress(Channel channel) {
        InetSocketAddress source = channel.attr(SOURCE).get();
        return source != null ? source : channel.remoteAddress();
    }
}
