package io.fleetmq.app.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fleetmq.app.metrics.Metrics;
import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.health.Readiness;
import io.fleetmq.transport.BoundListener;
import io.fleetmq.transport.EventLoops;
import io.fleetmq.transport.Listeners;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's admin HTTP port: liveness, readiness and Prometheus metrics. Readiness probes talk to
 * Kafka, Redis and PostgreSQL, so they run on {@link Readiness}' threads, never on the I/O thread.
 */
public final class AdminHttpServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AdminHttpServer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final Readiness readiness;
    private final Metrics metrics;
    private final BoundListener listener;

    private AdminHttpServer(EventLoops loops, String host, int port, Readiness readiness, Metrics metrics) {
        this.readiness = readiness;
        this.metrics = metrics;
        this.listener = Listeners.bind(loops, "HTTP", host, port, new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline()
                        .addLast(new HttpServerCodec())
                        .addLast(new HttpObjectAggregator(64 * 1024))
                        .addLast(new Handler());
            }
        });
    }

    /** Binds the admin port; throws {@link io.fleetmq.transport.ListenerBindException} if it cannot. */
    public static AdminHttpServer start(EventLoops loops, String host, int port, Readiness readiness, Metrics metrics) {
        return new AdminHttpServer(loops, host, port, readiness, metrics);
    }

    public BoundListener listener() {
        return listener;
    }

    @Override
    public void close() {
        listener.close();
    }

    private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (!request.decoderResult().isSuccess()) {
                send(ctx, false, json(HttpResponseStatus.BAD_REQUEST, error("malformed HTTP request")));
                return;
            }
            String path = new QueryStringDecoder(request.uri()).path();
            boolean known = path.equals("/health/live") || path.equals("/health/ready") || path.equals("/metrics");
            if (!known) {
                send(ctx, keepAlive, json(HttpResponseStatus.NOT_FOUND, error("no such resource: " + path)));
                return;
            }
            if (!HttpMethod.GET.equals(request.method())) {
                FullHttpResponse response = json(HttpResponseStatus.METHOD_NOT_ALLOWED,
                        error(request.method() + " is not allowed on " + path + "; use GET"));
                response.headers().set(HttpHeaderNames.ALLOW, "GET");
                send(ctx, keepAlive, response);
                return;
            }
            switch (path) {
                // Alive whatever the dependencies say; the body repeats their last known state
                // without probing anything, so liveness answers at once.
                case "/health/live" -> send(ctx, keepAlive, json(HttpResponseStatus.OK,
                        body(readiness.lastReport()).put("status", "UP")));
                case "/health/ready" -> ready(ctx, keepAlive);
                default -> send(ctx, keepAlive, text(HttpResponseStatus.OK, metrics.scrape(), PROMETHEUS_TEXT));
            }
        }

        private void ready(ChannelHandlerContext ctx, boolean keepAlive) {
            // The checks run on Readiness' own threads with a timeout; nothing waits here, so a
            // burst of probes neither blocks the I/O thread nor queues up behind a slow dependency.
            readiness.evaluateAsync().whenComplete((report, error) -> ctx.executor().execute(() -> {
                if (error != null) {
                    send(ctx, keepAlive, json(HttpResponseStatus.SERVICE_UNAVAILABLE,
                            status("DOWN").put("phase", readiness.phase()).put("error", HealthStatus.describe(error))));
                    return;
                }
                send(ctx, keepAlive, json(report.ready() ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
                        body(report)));
            }));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("Admin HTTP connection failed", cause);
            ctx.close();
        }
    }

    /**
     * The health body: {@code status} UP, DEGRADED (ready, but a degradable dependency is down)
     * or DOWN; the phase; the degraded dependencies; and each check with its impact.
     */
    static ObjectNode body(Readiness.Report report) {
        ObjectNode body = status(!report.ready() ? "DOWN" : report.isDegraded() ? "DEGRADED" : "UP");
        body.put("phase", report.phase());
        body.putArray("degraded").addAll(report.degraded().stream().map(JSON.getNodeFactory()::textNode).toList());
        ObjectNode checks = body.putObject("checks");
        for (Map.Entry<String, HealthStatus> e : report.checks().entrySet()) {
            ObjectNode c = checks.putObject(e.getKey());
            boolean required = report.impacts().get(e.getKey()) == Readiness.Impact.REQUIRED;
            c.put("status", e.getValue().up() ? "UP" : required ? "DOWN" : "DEGRADED");
            c.put("required", required);
            c.put("detail", e.getValue().detail());
        }
        return body;
    }

    private static ObjectNode status(String status) {
        return JSON.createObjectNode().put("status", status);
    }

    private static ObjectNode error(String message) {
        return JSON.createObjectNode().put("error", message);
    }

    private static FullHttpResponse json(HttpResponseStatus status, ObjectNode body) {
        return text(status, body.toString(), HttpHeaderValues.APPLICATION_JSON + "; charset=utf-8");
    }

    private static FullHttpResponse text(HttpResponseStatus status, String body, String contentType) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        response.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        return response;
    }

    private static void send(ChannelHandlerContext ctx, boolean keepAlive, FullHttpResponse response) {
        if (keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            ctx.writeAndFlush(response);
        } else {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
