package io.fleetmq.app.http;

import io.javalin.http.Context;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What operators ask of the running cluster: {@code /api/v1/dropped} (messages not delivered, and
 * why), {@code /api/v1/stats} (traffic and sizes over the last hour) and
 * {@code /api/v1/shared-subscriptions}. Any node answers for the whole cluster.
 */
final class OperationsRoutes {

    static final String DROPPED = AdminApi.PREFIX + "/dropped";
    static final String STATS = AdminApi.PREFIX + "/stats";
    static final String SHARED = AdminApi.PREFIX + "/shared-subscriptions";
    static final int DEFAULT_LIMIT = 100;
    /** Reasons are lower-case words; anything else cannot name one. */
    private static final Pattern REASON = Pattern.compile("[a-z0-9_]{1,64}");

    private final AdminApi api;

    OperationsRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.get(DROPPED).id("listDropped").tag("dropped")
                .summary("Recent dropped messages of every node (the last 1000 per node), newest first, and the"
                        + " counts per reason per node and in total")
                .query("reason", String.class, "only this reason, as in fleetmq_messages_dropped_total (e.g."
                        + " client_offline_qos0)")
                .query("clientId", String.class, "only drops whose client ID contains this")
                .query("node", String.class, "only this node (also narrows the counts)")
                .query("limit", Integer.class, "drops per page, 1 to " + Paging.MAX_PAGE_SIZE + " (default "
                        + DEFAULT_LIMIT + ")")
                .query("page", Integer.class, "page number, from 0 (default 0)")
                .reply(200, "one page and the counts", OpsModels.DroppedPage.class)
                .handle(this::dropped);
        table.get(STATS).id("getStats").tag("stats")
                .summary("Messages and bytes in and out, drops, connections, sessions and subscriptions over the"
                        + " last 360 sample intervals (an hour at the default 10 s), per node and in total")
                .query("node", String.class, "only this node")
                .query("since", String.class, "only samples after this instant (ISO-8601, e.g. 2030-01-31T12:00:00Z)")
                .reply(200, "the series", OpsModels.StatsView.class)
                .handle(this::stats);
        table.get(SHARED).id("listSharedSubscriptions").tag("shared-subscriptions")
                .summary("Shared subscriptions: for APPLICATION ones their Kafka backlog (partitions, readers, lag),"
                        + " for DEVICE ones their members")
                .paged()
                .reply(200, "one page", OpsModels.SharedPage.class)
                .handle(this::sharedList);
        table.delete(SHARED + "/{group}/<filter>").id("deleteSharedSubscription").tag("shared-subscriptions")
                .summary("Delete the backlog topic and consumer group of an APPLICATION shared subscription that has"
                        + " no members. The filter follows the group as path segments, one per topic level, each"
                        + " percent-encoded (# as %23, + as %2B)")
                .reply(204, "deleted")
                .reply(409, "clients still subscribe to it, or it is a DEVICE shared subscription",
                        ApiModels.ErrorBody.class)
                .handle(this::sharedDelete);
    }

    // ------------------------------------------------------------------------------------ dropped

    private void dropped(Context ctx) {
        String reason = Paging.filter(ctx, "reason");
        if (reason != null && !REASON.matcher(reason).matches()) {
            throw ApiException.badRequest("reason", "is not a drop reason (lower-case letters, digits and _)");
        }
        String clientId = Paging.filter(ctx, "clientId");
        String node = Paging.filter(ctx, "node");
        int limit = number(ctx, "limit", DEFAULT_LIMIT, 1, Paging.MAX_PAGE_SIZE);
        int page = number(ctx, "page", 0, 0, Integer.MAX_VALUE);
        List<OpsModels.Drop> matching = new ArrayList<>();
        Map<String, Long> total = new TreeMap<>();
        Map<String, Map<String, Long>> byNode = new TreeMap<>();
        for (OpsModels.NodeOps n : view().nodes()) {
            if (node != null && !node.equals(n.node())) {
                continue;
            }
            byNode.put(n.node(), new TreeMap<>(n.counts()));
            n.counts().forEach((r, c) -> total.merge(r, c, Long::sum));
            for (OpsModels.Drop d : n.drops()) {
                if ((reason == null || reason.equals(d.reason()))
                        && (clientId == null || d.clientId() != null && d.clientId().contains(clientId))) {
                    matching.add(d);
                }
            }
        }
        matching.sort(Comparator.comparing(OpsModels.Drop::time).reversed());
        long from = Math.min((long) page * limit, matching.size());
        List<OpsModels.Drop> items = matching.subList((int) from, (int) Math.min(from + limit, matching.size()));
        ApiJson.write(ctx, 200, new OpsModels.DroppedPage(List.copyOf(items), matching.size(), page, limit,
                new OpsModels.DropCounts(total, byNode)));
    }

    // -------------------------------------------------------------------------------------- stats

    private void stats(Context ctx) {
        String node = Paging.filter(ctx, "node");
        Instant since = since(Paging.filter(ctx, "since"));
        OperationsView v = view();
        List<OpsModels.NodeSeries> series = new ArrayList<>();
        Map<Instant, List<OpsModels.Sample>> byTime = new TreeMap<>();
        for (OpsModels.NodeOps n : v.nodes()) {
            if (node != null && !node.equals(n.node())) {
                continue;
            }
            List<OpsModels.Sample> samples = n.samples().stream()
                    .filter(s -> since == null || s.time().isAfter(since)).toList();
            series.add(new OpsModels.NodeSeries(n.node(), samples));
            samples.forEach(s -> byTime.computeIfAbsent(s.time(), t -> new ArrayList<>()).add(s));
        }
        List<OpsModels.Sample> total = byTime.entrySet().stream().map(e -> sum(e.getKey(), e.getValue())).toList();
        ApiJson.write(ctx, 200, new OpsModels.StatsView(v.statsInterval().toMillis() / 1000.0, series, total));
    }

    private static OpsModels.Sample sum(Instant time, List<OpsModels.Sample> samples) {
        long in = 0, out = 0, bytesIn = 0, bytesOut = 0, dropped = 0, connections = 0, sessions = 0, subscriptions = 0;
        Map<String, Long> drops = new HashMap<>();
        for (OpsModels.Sample s : samples) {
            in += s.messagesIn();
            out += s.messagesOut();
            bytesIn += s.bytesIn();
            bytesOut += s.bytesOut();
            dropped += s.dropped();
            connections += s.connections();
            sessions += s.sessions();
            subscriptions += s.subscriptions();
            s.drops().forEach((r, c) -> drops.merge(r, c, Long::sum));
        }
        return new OpsModels.Sample(time, in, out, bytesIn, bytesOut, dropped, drops, connections, sessions,
                subscriptions);
    }

    private static Instant since(String raw) {
        if (raw == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(raw).toInstant();
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest("since", "is not an ISO-8601 date-time with offset, such as 2030-01-31T12:00:00Z");
        }
    }

    // ------------------------------------------------------------------------ shared subscriptions

    private void sharedList(Context ctx) {
        Paging paging = Paging.of(ctx);
        List<OpsModels.SharedSubscription> all = new ArrayList<>(view().sharedSubscriptions());
        all.sort(Comparator.comparing(OpsModels.SharedSubscription::group)
                .thenComparing(OpsModels.SharedSubscription::filter));
        long from = Math.min((long) paging.page() * paging.pageSize(), all.size());
        List<OpsModels.SharedSubscription> items =
                all.subList((int) from, (int) Math.min(from + paging.pageSize(), all.size()));
        ApiJson.write(ctx, 200, new OpsModels.SharedPage(List.copyOf(items), all.size(), paging.page(),
                paging.pageSize()));
    }

    private void sharedDelete(Context ctx) {
        String group = ctx.pathParam("group");
        String filter = ctx.pathParam("filter");
        String named = "$share/" + AdminApi.abbreviate(group) + "/" + AdminApi.abbreviate(filter);
        switch (view().deleteSharedSubscription(group, filter)) {
            case DELETED -> ctx.status(204);
            case NOT_FOUND -> throw ApiException.notFound("no APPLICATION shared subscription " + named);
            case HAS_MEMBERS -> throw ApiException.conflict("clients subscribe to " + named
                    + "; its backlog goes once they unsubscribe or their sessions end");
            case NOT_APPLICATION -> throw ApiException.conflict(named
                    + " is a DEVICE shared subscription; it has no backlog to delete");
        }
    }

    // ------------------------------------------------------------------------------------- shared

    private OperationsView view() {
        OperationsView v = api.operations();
        return new OperationsView() {
            @Override
            public String nodeId() {
                return guard(v::nodeId);
            }

            @Override
            public java.time.Duration statsInterval() {
                return guard(v::statsInterval);
            }

            @Override
            public List<OpsModels.NodeOps> nodes() {
                return guard(v::nodes);
            }

            @Override
            public List<OpsModels.SharedSubscription> sharedSubscriptions() {
                return guard(v::sharedSubscriptions);
            }

            @Override
            public DeleteOutcome deleteSharedSubscription(String group, String topicFilter) {
                return guard(() -> v.deleteSharedSubscription(group, topicFilter));
            }
        };
    }

    private static <T> T guard(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (OperationsView.Unavailable e) {
            throw ApiException.unavailable(e.getMessage());
        }
    }

    private static int number(Context ctx, String name, int absent, int min, int max) {
        String raw = ctx.queryParam(name);
        if (raw == null || raw.isEmpty()) {
            return absent;
        }
        int value;
        try {
            value = Integer.parseInt(raw.trim());
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name, "'" + AdminApi.abbreviate(raw) + "' is not a whole number");
        }
        if (value < min || value > max) {
            throw ApiException.badRequest(name, "must be between " + min + " and " + max);
        }
        return value;
    }
}
