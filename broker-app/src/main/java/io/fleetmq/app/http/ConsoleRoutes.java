package io.fleetmq.app.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;

/**
 * The web console: a single page at {@code /}, its files under {@code /console/} and the two
 * libraries it uses under {@code /webjars/}, all read from the node's jar. None of it needs a
 * token (the page logs in through the API); the API calls it makes do.
 *
 * <p>Every answer carries a Content-Security-Policy that lets the page load scripts, styles and
 * images from this port only and connect only to this port and to the node's own WebSocket
 * listeners: so even a script injected through data shown on the page could neither load more code
 * nor send the token anywhere else. The page never inserts API data as HTML in the first place.
 */
final class ConsoleRoutes {

    /** Where the console's own files are on the classpath. */
    private static final String CONSOLE = "console/";
    /** Where WebJars keep their files on the classpath. */
    private static final String WEBJARS = "META-INF/resources/webjars/";
    /** Only plain names: no {@code ..}, no backslashes, no encoded tricks reach the class loader. */
    private static final Pattern SAFE_PATH = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*");
    /** A host name or IP literal as a browser sends it in Host; anything else gets no ws: source. */
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]");
    private static final Map<String, String> TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8",
            "json", "application/json",
            "svg", "image/svg+xml",
            "png", "image/png");

    private final IntSupplier wsPort;
    private final IntSupplier wssPort;
    private final Map<String, byte[]> cache = new ConcurrentHashMap<>();

    /**
     * @param wsPort  the bound port of the node's WebSocket listener, or -1 (it binds after the admin port)
     * @param wssPort the bound port of its secure WebSocket listener, or -1
     */
    ConsoleRoutes(IntSupplier wsPort, IntSupplier wssPort) {
        this.wsPort = wsPort;
        this.wssPort = wssPort;
    }

    void register(RoutesConfig routes) {
        routes.get("/", ctx -> serve(ctx, CONSOLE + "index.html", false));
        routes.get("/console/config.json", this::config);
        routes.get("/console/<file>", ctx -> serve(ctx, CONSOLE, ctx.pathParam("file"), false));
        // Versioned paths never change content, so browsers may keep them.
        routes.get("/webjars/<file>", ctx -> serve(ctx, WEBJARS, ctx.pathParam("file"), true));
    }

    /** What the MQTT page needs to know to connect back to this node over WebSocket. */
    private void config(Context ctx) {
        headers(ctx, false);
        int ws = wsPort.getAsInt();
        int wss = wssPort.getAsInt();
        ctx.contentType(ApiJson.CONTENT_TYPE).result("{\"wsPort\":" + (ws > 0 ? ws : "null") + ",\"wssPort\":"
                + (wss > 0 ? wss : "null") + ",\"wsPath\":\"/mqtt\"}");
    }

    private void serve(Context ctx, String root, String file, boolean immutable) {
        if (!SAFE_PATH.matcher(file).matches() || !TYPES.containsKey(extension(file))) {
            throw ApiException.notFound("no such resource: " + AdminApi.abbreviate(ctx.path()));
        }
        serve(ctx, root + file, immutable);
    }

    private void serve(Context ctx, String resource, boolean immutable) {
        byte[] body = cache.computeIfAbsent(resource, ConsoleRoutes::read);
        if (body.length == 0) {
            cache.remove(resource);
            throw ApiException.notFound("no such resource: " + AdminApi.abbreviate(ctx.path()));
        }
        headers(ctx, immutable);
        ctx.contentType(TYPES.get(extension(resource))).result(body);
    }

    private void headers(Context ctx, boolean immutable) {
        // The console's own files change with the node's version and are small: revalidate each time.
        ctx.header("Cache-Control", immutable ? "public, max-age=31536000, immutable" : "no-cache");
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Referrer-Policy", "no-referrer");
        ctx.header("X-Frame-Options", "DENY");
        ctx.header("Content-Security-Policy", policy(ctx.host()));
    }

    /** Self for everything; for connections also this host's WebSocket listeners. */
    String policy(String hostHeader) {
        StringBuilder connect = new StringBuilder("'self'");
        String host = hostName(hostHeader);
        if (host != null) {
            int ws = wsPort.getAsInt();
            int wss = wssPort.getAsInt();
            if (ws > 0) {
                connect.append(" ws://").append(host).append(':').append(ws);
            }
            if (wss > 0) {
                connect.append(" wss://").append(host).append(':').append(wss);
            }
        }
        return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
                + "connect-src " + connect + "; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
    }

    /** The host part of a Host header, or null if it is not a plain host name or address. */
    static String hostName(String hostHeader) {
        if (hostHeader == null) {
            return null;
        }
        String h = hostHeader;
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            h = end < 0 ? h : h.substring(0, end + 1);
        } else if (h.indexOf(':') >= 0) {
            h = h.substring(0, h.indexOf(':'));
        }
        return HOST.matcher(h).matches() ? h.toLowerCase(Locale.ROOT) : null;
    }

    private static String extension(String path) {
        int dot = path.lastIndexOf('.');
        return dot < 0 ? "" : path.substring(dot + 1).toLowerCase(Locale.ROOT);
    }

    /** The resource's bytes, or none if there is no such resource. */
    private static byte[] read(String resource) {
        try (InputStream in = ConsoleRoutes.class.getClassLoader().getResourceAsStream(resource)) {
            return in == null ? new byte[0] : in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
