package io.fleetmq.app.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fleetmq.app.metrics.Metrics;
import io.fleetmq.core.health.HealthStatus;
import io.fleetmq.core.health.Readiness;
import io.fleetmq.persistence.security.ConflictException;
import io.fleetmq.persistence.security.DataAccessException;
import io.fleetmq.transport.ListenerBindException;
import io.javalin.Javalin;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.http.MethodNotAllowedResponse;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's admin HTTP port, served by Javalin on Jetty: liveness, readiness and Prometheus
 * metrics (open), the admin API under {@code /api/v1} (bearer tokens, see {@link AdminApi}) and
 * the web console at {@code /} (open; it logs in through the API, see {@link ConsoleRoutes}).
 * Handlers run on Jetty's worker threads, never on its selector threads; readiness probes wait on
 * {@link Readiness}' own threads without holding a worker.
 */
public final class AdminHttpServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AdminHttpServer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
    static final String OPENAPI = AdminApi.PREFIX + "/openapi.json";
    /** Enough for concurrent probes, scrapes and admin calls; password checks hold one for ~0.1 s. */
    private static final int MAX_THREADS = 32;

    private final Readiness readiness;
    private final Metrics metrics;
    private final Javalin app;
    private final InetSocketAddress address;
    /** The node's WebSocket listeners, bound after this port: the console connects back to them. */
    private volatile int wsPort = -1;
    private volatile int wssPort = -1;

    private AdminHttpServer(String host, int port, Readiness readiness, Metrics metrics, AdminApi api) {
        this.readiness = readiness;
        this.metrics = metrics;
        RouteTable table = api.routes();
        String[] openApi = new String[1];
        table.get(OPENAPI).id("openApi").tag("meta").open()
                .summary("This document")
                .reply(200, "the OpenAPI 3 document of this API")
                .handle(ctx -> ctx.contentType(ApiJson.CONTENT_TYPE).result(openApi[0]));
        openApi[0] = OpenApiDocument.json(table);
        Set<String> openPaths = table.openPaths();
        this.app = Javalin.create(config -> configure(config, host, port, table, openPaths, api));
        try {
            app.start();
        } catch (RuntimeException e) {
            throw new ListenerBindException("HTTP", host, port, e.getCause() != null ? e.getCause() : e);
        }
        ServerConnector connector = (ServerConnector) app.jettyServer().server().getConnectors()[0];
        this.address = new InetSocketAddress(connector.getHost(), connector.getLocalPort());
    }

    /**
     * Binds the admin port; throws {@link ListenerBindException} if it cannot.
     *
     * @param api the admin API, answering 503 until it is {@linkplain AdminApi#connect connected}
     */
    public static AdminHttpServer start(String host, int port, Readiness readiness, Metrics metrics, AdminApi api) {
        return new AdminHttpServer(host, port, readiness, metrics, api);
    }

    private void configure(JavalinConfig config, String host, int port, RouteTable table, Set<String> openPaths,
            AdminApi api) {
        config.jetty.host = host;
        config.jetty.port = port;
        QueuedThreadPool threads = new QueuedThreadPool(MAX_THREADS, 2);
        threads.setName("admin-http");
        config.jetty.threadPool = threads;
        config.startup.showJavalinBanner = false;
        config.startup.showOldJavalinVersionWarning = false;
        config.startup.startupWatcherEnabled = false;
        config.http.prefer405over404 = true;
        config.http.maxRequestSize = 64 * 1024;

        config.routes.get("/health/live", this::live);
        config.routes.get("/health/ready", this::ready);
        config.routes.get("/metrics", ctx -> ctx.contentType(PROMETHEUS_TEXT).header("Cache-Control", "no-store")
                .result(metrics.scrape()));
        config.routes.before("/api/*", ctx -> api.requireToken(ctx, openPaths));
        table.register(config.routes);
        new ConsoleRoutes(() -> wsPort, () -> wssPort).register(config.routes);

        config.routes.exception(ApiException.class, (e, ctx) -> {
            e.headers().forEach(ctx::header);
            error(ctx, e.status(), e.error(), e.getMessage());
        });
        config.routes.exception(ConflictException.class, (e, ctx) -> error(ctx, 409, "conflict", e.getMessage()));
        config.routes.exception(DataAccessException.class, (e, ctx) -> {
            log.warn("Admin API {} {}: PostgreSQL is unavailable: {}", ctx.method(), ctx.path(), HealthStatus.describe(e));
            error(ctx, 503, "unavailable", "PostgreSQL is unavailable; try again later");
        });
        config.routes.exception(HttpResponseException.class, (e, ctx) -> {
            if (e instanceof MethodNotAllowedResponse m) {
                String allowed = m.getDetails().getOrDefault("availableMethods", m.getDetails().get("Available methods"));
                if (allowed != null) {
                    ctx.header("Allow", allowed);
                }
                error(ctx, 405, "method_not_allowed", ctx.method() + " is not allowed on " + ctx.path()
                        + (allowed != null ? "; use " + allowed : ""));
                return;
            }
            error(ctx, e.getStatus(), e.getStatus() == 404 ? "not_found" : "http_" + e.getStatus(),
                    e.getStatus() == 404 ? "no such resource: " + ctx.path() : e.getMessage());
        });
        config.routes.exception(Exception.class, (e, ctx) -> {
            // The caller learns that it failed; the cause, with its stack trace, goes to the log only.
            log.warn("Admin HTTP {} {} failed", ctx.method(), ctx.path(), e);
            error(ctx, 500, "internal", "the request failed; the node's log has the cause");
        });
    }

    private static void error(Context ctx, int status, String error, String message) {
        ApiJson.write(ctx, status, new ApiModels.ErrorBody(error, message));
    }

    /**
     * Alive whatever the dependencies say; the body repeats their last known state without probing
     * anything, so liveness answers at once.
     */
    private void live(Context ctx) {
        json(ctx, 200, body(readiness.lastReport()).put("status", "UP"));
    }

    /**
     * The checks run on Readiness' own threads with a timeout; the request waits asynchronously, so
     * a burst of probes neither holds worker threads nor queues up behind a slow dependency.
     */
    private void ready(Context ctx) {
        ctx.future(() -> readiness.evaluateAsync().handle((report, error) -> {
            if (error != null) {
                json(ctx, 503, status("DOWN").put("phase", readiness.phase()).put("error", HealthStatus.describe(error)));
            } else {
                json(ctx, report.ready() ? 200 : 503, body(report));
            }
            return null;
        }).toCompletableFuture());
    }

    /**
     * Tells the web console where the node's MQTT WebSocket listeners are (-1: not enabled), for
     * its MQTT page and its Content-Security-Policy.
     */
    public void webSocketPorts(int ws, int wss) {
        this.wsPort = ws;
        this.wssPort = wss;
    }

    public InetSocketAddress address() {
        return address;
    }

    public int port() {
        return address.getPort();
    }

    @Override
    public void close() {
        app.stop();
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

    private static void json(Context ctx, int status, ObjectNode body) {
        ctx.status(status).contentType(ApiJson.CONTENT_TYPE).header("Cache-Control", "no-store").result(body.toString());
    }
}
