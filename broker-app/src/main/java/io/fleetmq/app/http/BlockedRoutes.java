package io.fleetmq.app.http;

import io.fleetmq.core.security.BlockEntry;
import io.fleetmq.core.security.BlockList;
import io.fleetmq.core.security.SecurityChange;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;

/** {@code /api/v1/blocked}: clients refused at CONNECT and disconnected wherever they are. */
final class BlockedRoutes {

    static final String PATH = AdminApi.PREFIX + "/blocked";
    private static final List<String> TYPES =
            List.of(BlockEntry.CLIENT_ID, BlockEntry.USERNAME, BlockEntry.IP, BlockEntry.REGEX);

    private final AdminApi api;

    BlockedRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.post(PATH).id("createBlocked").tag("blocked")
                .summary("Block clients by client ID, user name, IP address or CIDR range, or a regular expression")
                .body(ApiModels.BlockedRequest.class)
                .reply(201, "created", ApiModels.CreatedId.class)
                .reply(409, "the same type, value and target are blocked already", ApiModels.ErrorBody.class)
                .handle(this::create);
        table.get(PATH).id("listBlocked").tag("blocked")
                .summary("List blocked entries, newest first (expired ones too)")
                .paged()
                .query("type", String.class, "only this type", TYPES.toArray(String[]::new))
                .reply(200, "one page", ApiModels.BlockedPage.class)
                .handle(this::list);
        table.get(PATH + "/{id}").id("getBlocked").tag("blocked")
                .summary("Read a blocked entry")
                .reply(200, "the entry", ApiModels.BlockedView.class)
                .handle(this::get);
        table.delete(PATH + "/{id}").id("deleteBlocked").tag("blocked")
                .summary("Unblock")
                .reply(204, "deleted")
                .handle(this::delete);
    }

    private void create(Context ctx) {
        ApiModels.BlockedRequest r = ApiJson.read(ctx, ApiModels.BlockedRequest.class);
        if (r.type() == null) {
            throw ApiException.badRequest("type", "is required (" + String.join(", ", TYPES) + ")");
        }
        if (r.value() == null) {
            throw ApiException.badRequest("value", "is required");
        }
        String reason = BlockList.validate(r.type(), r.value(), r.target());
        if (reason != null) {
            throw ApiException.badRequest(reason);
        }
        Instant expiresAt = expiresAt(r.expiresAt());
        BlockEntry created = api.stores().blockedClients().create(r.type(), r.value(), r.target(), expiresAt);
        api.announce(new SecurityChange(SecurityChange.Kind.BLOCKED, created.id(), false, false));
        ctx.header("Location", PATH + "/" + created.id());
        ApiJson.write(ctx, 201, new ApiModels.CreatedId(created.id()));
    }

    private Instant expiresAt(String raw) {
        if (raw == null) {
            return null;
        }
        Instant at;
        try {
            at = OffsetDateTime.parse(raw).toInstant();
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest("expiresAt", "is not an ISO-8601 date-time with offset, such as 2030-01-31T12:00:00Z");
        }
        if (!at.isAfter(api.clock().instant())) {
            throw ApiException.badRequest("expiresAt", "must be in the future");
        }
        return at;
    }

    private void list(Context ctx) {
        Paging paging = Paging.of(ctx);
        String type = Paging.filter(ctx, "type", TYPES);
        ApiJson.write(ctx, 200, ApiModels.BlockedPage.of(
                api.stores().blockedClients().list(type, paging.page(), paging.pageSize()), api.clock().instant()));
    }

    private void get(Context ctx) {
        String id = AdminApi.id(ctx, "blocked entry");
        BlockEntry entry = api.stores().blockedClients().get(id).orElseThrow(() -> notFound(id));
        ApiJson.write(ctx, 200, ApiModels.BlockedView.of(entry, api.clock().instant()));
    }

    private void delete(Context ctx) {
        String id = AdminApi.id(ctx, "blocked entry");
        if (!api.stores().blockedClients().delete(id)) {
            throw notFound(id);
        }
        api.announce(new SecurityChange(SecurityChange.Kind.BLOCKED, id, true, true));
        ctx.status(204);
    }

    private static ApiException notFound(String id) {
        return ApiException.notFound("no blocked entry with id '" + id + "'");
    }
}
