package io.fleetmq.transport.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * Looks at a connection's first bytes, as they arrive, for the start of a PROXY header ("PROXY "
 * in version 1, the 12-byte signature in version 2) and closes the connection at the first byte
 * that fits neither. Netty's decoder on its own takes anything that is not version 2 for an
 * unfinished version 1 line and waits for its end, so a client that sends a short CONNECT straight
 * to the listener would wait for the connect timeout instead of being refused at once.
 */
final class ProxyHeaderCheck extends ChannelInboundHandlerAdapter {

    private static final byte[] V1 = "PROXY ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] V2 = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

    private final ProxyRefusals refusals;
    private int seen;
    private boolean v1 = true;
    private boolean v2 = true;

    ProxyHeaderCheck(ProxyRefusals refusals) {
        this.refusals = refusals;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        for (int i = in.readerIndex(); i < in.writerIndex() && (v1 || v2) && !complete(); i++, seen++) {
            byte b = in.getByte(i);
            v1 = v1 && V1[seen] == b;
            v2 = v2 && V2[seen] == b;
        }
        if (!v1 && !v2) {
            ReferenceCountUtil.release(msg);
            if (!ctx.channel().isActive()) {
                return; // already refused; what was read with it is dropped
            }
            refusals.refuse(ctx.channel(), ProxyRefusals.MISSING, "the connection did not start with a PROXY header");
            return;
        }
        if (complete()) {
            ctx.pipeline().remove(this); // the decoder takes it from here
        }
        ctx.fireChannelRead(msg);
    }

    /** Whether the signature of one version has been seen whole (the versions differ from the first byte). */
    private boolean complete() {
        return v1 && seen == V1.length || v2 && seen == V2.length;
    }
}
