package io.fleetmq.app.http;

import io.fleetmq.core.cluster.NodeInfo;
import io.javalin.http.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code /api/v1/cluster/nodes}: the nodes of the cluster as the answering node knows them from
 * their heartbeats, and draining one. A drain is a command through Kafka to the node concerned,
 * whichever node takes the request: that node sends its clients elsewhere, refuses new ones and
 * reports itself not ready, until it is undrained or its process restarts.
 */
final class ClusterNodeRoutes {

    static final String PATH = AdminApi.PREFIX + "/cluster/nodes";
    /** How long a drain request waits for the node's heartbeat to report it. */
    static final Duration DRAIN_WAIT = Duration.ofSeconds(10);

    private final AdminApi api;

    ClusterNodeRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.get(PATH).id("listClusterNodes").tag("cluster")
                .summary("List the nodes of the cluster with their state, by node ID")
                .paged()
                .reply(200, "one page", RetainedModels.ClusterNodesPage.class)
                .handle(RetainedRoutes.serving(this::list));
        table.post(PATH + "/{id}/drain").id("drainClusterNode").tag("cluster")
                .summary("Drain a node: its clients are sent to other nodes (MQTT 5: DISCONNECT 0x9C), new CONNECTs"
                        + " are refused and /health/ready says 503, without stopping it")
                .reply(200, "the node reports itself draining", RetainedModels.ClusterNodeView.class)
                .reply(202, "sent; the node has not reported it yet", RetainedModels.ClusterNodeView.class)
                .reply(404, "no node with this ID", ApiModels.ErrorBody.class)
                .reply(409, "the node is not alive", ApiModels.ErrorBody.class)
                .handle(RetainedRoutes.serving(ctx -> drain(ctx, true)));
        table.post(PATH + "/{id}/undrain").id("undrainClusterNode").tag("cluster")
                .summary("Undrain a node: it takes clients again and reports itself ready")
                .reply(200, "the node reports itself serving", RetainedModels.ClusterNodeView.class)
                .reply(202, "sent; the node has not reported it yet", RetainedModels.ClusterNodeView.class)
                .reply(404, "no node with this ID", ApiModels.ErrorBody.class)
                .reply(409, "the node is not alive", ApiModels.ErrorBody.class)
                .handle(RetainedRoutes.serving(ctx -> drain(ctx, false)));
    }

    private ClusterNodes nodes() {
        ClusterNodes n = api.clusterNodes();
        if (n == null) {
            throw ApiException.unavailable("the node is starting; try again shortly");
        }
        return n;
    }

    private void list(Context ctx) {
        Paging paging = Paging.of(ctx);
        List<ClusterNodes.Node> all = new ArrayList<>(nodes().nodes());
        all.sort(java.util.Comparator.comparing(ClusterNodes.Node::nodeId));
        int from = (int) Math.min((long) paging.page() * paging.pageSize(), all.size());
        int to = Math.min(from + paging.pageSize(), all.size());
        List<RetainedModels.ClusterNodeView> items = all.subList(from, to).stream().map(ClusterNodeRoutes::view)
                .toList();
        ApiJson.write(ctx, 200, new RetainedModels.ClusterNodesPage(items, all.size(), paging.page(),
                paging.pageSize()));
    }

    private void drain(Context ctx, boolean drain) {
        String id = ctx.pathParam("id");
        ClusterNodes nodes = nodes();
        ClusterNodes.Node node = nodes.nodes().stream().filter(n -> n.nodeId().equals(id)).findFirst()
                .orElseThrow(() -> notFound(id));
        if (!node.alive()) {
            throw ApiException.conflict("node '" + AdminApi.abbreviate(id) + "' is " + state(node)
                    + "; only a live node can be " + (drain ? "drained" : "undrained"));
        }
        ClusterNodes.Node after = nodes.drain(id, drain, DRAIN_WAIT).orElseThrow(() -> notFound(id));
        boolean reported = after.info() != null && after.info().draining() == drain;
        ApiJson.write(ctx, reported ? 200 : 202, view(after));
    }

    static RetainedModels.ClusterNodeView view(ClusterNodes.Node n) {
        NodeInfo info = n.info();
        String state = state(n);
        return new RetainedModels.ClusterNodeView(n.nodeId(), state, state.equals("serving"), n.self(),
                n.incarnation(), info == null ? null : info.address(), info == null ? null : info.version(),
                info == null || info.startedAtMillis() <= 0 ? null : Instant.ofEpochMilli(info.startedAtMillis()),
                info == null ? null : info.connectedSessions(), Instant.ofEpochMilli(n.heartbeatMillis()));
    }

    static String state(ClusterNodes.Node n) {
        if (n.self() && n.fenced()) {
            return "fenced";
        }
        if (!n.alive()) {
            return n.up() ? "unreachable" : "left";
        }
        return n.info() != null && n.info().draining() ? "draining" : "serving";
    }

    private static ApiException notFound(String id) {
        return ApiException.notFound("no node with ID '" + AdminApi.abbreviate(id) + "'");
    }
}
