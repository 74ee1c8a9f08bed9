package io.fleetmq.transport.proxy;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.haproxy.HAProxyCommand;
import io.netty.handler.codec.haproxy.HAProxyMessage;
import io.netty.handler.codec.haproxy.HAProxyProtocolException;
import io.netty.handler.codec.haproxy.HAProxyProxiedProtocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * Takes the decoded PROXY header: a proxied TCP connection over IPv4 or IPv6 gives the client's
 * address; {@code PROXY UNKNOWN} and version 2's LOCAL (the balancer's own health checks) keep the
 * socket's peer. Leaves the pipeline after the header; a header the decoder cannot read closes the
 * connection.
 */
final class ProxyHeaderHandler extends ChannelInboundHandlerAdapter {

    private final ProxyRefusals refusals;

    ProxyHeaderHandler(ProxyRefusals refusals) {
        this.refusals = refusals;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof HAProxyMessage header)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            InetSocketAddress source = source(header);
            if (source != null) {
                ctx.channel().attr(ProxyProtocol.SOURCE).set(source);
            }
        } finally {
            header.release();
        }
        ctx.pipeline().remove(this);
    }

    private static InetSocketAddress source(HAProxyMessage header) {
        if (header.command() != HAProxyCommand.PROXY) {
            return null;
        }
        HAProxyProxiedProtocol p = header.proxiedProtocol();
        if (p != HAProxyProxiedProtocol.TCP4 && p != HAProxyProxiedProtocol.TCP6) {
            return null;
        }
        // The decoder has checked the address's syntax: a literal, never a name to look up.
        try {
            return new InetSocketAddress(InetAddress.getByName(header.sourceAddress()), header.sourcePort());
        } catch (java.net.UnknownHostException e) {
            return null;
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof HAProxyProtocolException) {
            refusals.refuse(ctx.channel(), ProxyRefusals.MALFORMED, cause.getMessage());
            return;
        }
        ctx.fireExceptionCaught(cause);
    }
}
