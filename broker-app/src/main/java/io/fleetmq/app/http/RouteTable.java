package io.fleetmq.app.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Handler;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The admin API's operations, each with what its documentation needs: method, path, summary,
 * parameters, request and response bodies and status codes. The same table registers the routes
 * with Javalin and feeds {@link OpenApiDocument}, so the published document cannot drift from what
 * the server does.
 */
final class RouteTable {

    enum Method { GET, POST, PUT, DELETE }

    enum In { PATH, QUERY }

    /** A path or query parameter; {@code type} is String, Integer or Boolean. */
    record Param(String name, In in, Class<?> type, boolean required, String description, List<String> allowed) {
    }

    /** One possible answer; {@code body} null for an answer without content. */
    record Reply(int status, String description, Class<?> body) {
    }

    /** One operation; {@code open} operations need no bearer token. */
    record Route(Method method, String path, String operationId, String summary, String tag, boolean open,
            Class<?> requestBody, List<Param> params, List<Reply> replies, Handler handler) {
    }

    private final List<Route> routes = new ArrayList<>();

    Builder get(String path) {
        return new Builder(Method.GET, path);
    }

    Builder post(String path) {
        return new Builder(Method.POST, path);
    }

    Builder put(String path) {
        return new Builder(Method.PUT, path);
    }

    Builder delete(String path) {
        return new Builder(Method.DELETE, path);
    }

    List<Route> routes() {
        return List.copyOf(routes);
    }

    /** Paths whose every operation is open: the bearer check lets them through. */
    Set<String> openPaths() {
        Set<String> guarded = routes.stream().filter(r -> !r.open()).map(Route::path).collect(Collectors.toSet());
        return routes.stream().filter(Route::open).map(Route::path).filter(p -> !guarded.contains(p))
                .collect(Collectors.toUnmodifiableSet());
    }

    void register(RoutesConfig config) {
        for (Route r : routes) {
            switch (r.method()) {
                case GET -> config.get(r.path(), r.handler());
                case POST -> config.post(r.path(), r.handler());
                case PUT -> config.put(r.path(), r.handler());
                case DELETE -> config.delete(r.path(), r.handler());
            }
        }
    }

    /** Collects one operation's description; {@link #handle} adds it to the table. */
    final class Builder {
        private final Method method;
        private final String path;
        private String operationId;
        private String summary = "";
        private String tag = "";
        private boolean open;
        private Class<?> requestBody;
        private final List<Param> params = new ArrayList<>();
        private final List<Reply> replies = new ArrayList<>();

        private Builder(Method method, String path) {
            this.method = method;
            this.path = path;
            for (String segment : path.split("/")) {
                // {name} is one segment; <name> the rest of the path, slashes and all.
                if (segment.startsWith("{") && segment.endsWith("}") || segment.startsWith("<") && segment.endsWith(">")) {
                    params.add(new Param(segment.substring(1, segment.length() - 1), In.PATH, String.class, true,
                            "identifier", List.of()));
                }
            }
        }

        Builder id(String operationId) {
            this.operationId = operationId;
            return this;
        }

        Builder summary(String summary) {
            this.summary = summary;
            return this;
        }

        Builder tag(String tag) {
            this.tag = tag;
            return this;
        }

        /** No bearer token needed. */
        Builder open() {
            this.open = true;
            return this;
        }

        Builder query(String name, Class<?> type, String description, String... allowed) {
            params.add(new Param(name, In.QUERY, type, false, description, List.of(allowed)));
            return this;
        }

        /** The standard paging parameters {@code page} and {@code pageSize}. */
        Builder paged() {
            query("page", Integer.class, "page number, from 0 (default 0)");
            return query("pageSize", Integer.class, "items per page, 1 to " + Paging.MAX_PAGE_SIZE
                    + " (default " + Paging.DEFAULT_PAGE_SIZE + ")");
        }

        Builder body(Class<?> type) {
            this.requestBody = type;
            return this;
        }

        Builder reply(int status, String description, Class<?> body) {
            replies.add(new Reply(status, description, body));
            return this;
        }

        Builder reply(int status, String description) {
            return reply(status, description, null);
        }

        void handle(Handler handler) {
            // The answers every operation of its kind can give, so no operation forgets one.
            if (requestBody != null || params.stream().anyMatch(p -> p.in() == In.QUERY)) {
                addUnlessPresent(400, "invalid input; the message names the field");
            }
            if (!open) {
                addUnlessPresent(401, "missing, unknown, expired or revoked bearer token");
            }
            if (params.stream().anyMatch(p -> p.in() == In.PATH)) {
                addUnlessPresent(404, "no such entity");
            }
            addUnlessPresent(503, "PostgreSQL is unavailable or the node is starting");
            routes.add(new Route(method, path, operationId, summary, tag, open, requestBody, List.copyOf(params),
                    List.copyOf(replies), handler));
        }

        private void addUnlessPresent(int status, String description) {
            if (replies.stream().noneMatch(r -> r.status() == status)) {
                replies.add(new Reply(status, description, ApiModels.ErrorBody.class));
            }
        }
    }
}
