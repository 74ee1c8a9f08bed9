package io.fleetmq.app.http;

import io.fleetmq.core.security.RefusedConnection;
import io.fleetmq.persistence.security.RefusedConnections;
import io.javalin.http.Context;
import java.util.List;

/** {@code /api/v1/refused-connections}: who was refused, why, and how often. */
final class RefusedConnectionRoutes {

    static final String PATH = AdminApi.PREFIX + "/refused-connections";
    private static final List<String> REASONS = List.of(RefusedConnection.BAD_CREDENTIALS,
            RefusedConnection.NOT_AUTHORIZED, RefusedConnection.BLOCKED, RefusedConnection.ANONYMOUS_REFUSED,
            RefusedConnection.AUTH_UNAVAILABLE, RefusedConnection.AUTH_BUSY);

    private final AdminApi api;

    RefusedConnectionRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.get(PATH).id("listRefusedConnections").tag("refused-connections")
                .summary("List refused connections, one entry per client ID, latest refusal first")
                .paged()
                .query("clientId", String.class, "part of the client ID")
                .query("username", String.class, "part of the user name")
                .query("address", String.class, "part of the IP address")
                .query("reason", String.class, "only this reason", REASONS.toArray(String[]::new))
                .reply(200, "one page", ApiModels.RefusedPage.class)
                .handle(this::list);
    }

    private void list(Context ctx) {
        Paging paging = Paging.of(ctx);
        RefusedConnections.Filter filter = new RefusedConnections.Filter(Paging.filter(ctx, "clientId"),
                Paging.filter(ctx, "username"), Paging.filter(ctx, "address"), Paging.filter(ctx, "reason", REASONS));
        ApiJson.write(ctx, 200, ApiModels.RefusedPage.of(
                api.stores().refusedConnections().list(filter, paging.page(), paging.pageSize())));
    }
}
