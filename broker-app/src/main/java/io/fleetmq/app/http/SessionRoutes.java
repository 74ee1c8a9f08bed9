package io.fleetmq.app.http;

import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.session.SessionView;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * {@code /api/v1/sessions} and {@code /api/v1/subscriptions}: the cluster's sessions and
 * subscriptions as every node holds them, one session in detail, and disconnecting a client or
 * ending its session wherever it is.
 *
 * <p>Listings walk the node's replicated session directory in client ID order (kept sorted as it
 * changes), so a page costs one pass over the sessions and no I/O, even with 100,000 of them.
 */
final class SessionRoutes {

    static final String SESSIONS = AdminApi.PREFIX + "/sessions";
    static final String SUBSCRIPTIONS = AdminApi.PREFIX + "/subscriptions";
    private static final List<String> TYPES = List.of("DEVICE", "APPLICATION");
    private static final List<String> BOOLEANS = List.of("true", "false");
    private static final Comparator<Subscription> BY_FILTER = Comparator.comparing(Subscription::topicFilter)
            .thenComparing(s -> s.shareGroup() == null ? "" : s.shareGroup());

    private final AdminApi api;

    SessionRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.get(SESSIONS).id("listSessions").tag("sessions")
                .summary("List the cluster's sessions, connected or not, in client ID order")
                .paged()
                .query("clientIdPrefix", String.class, "only client IDs starting with this")
                .query("node", String.class, "only sessions held by this node")
                .query("connected", Boolean.class, "only connected (true) or offline (false) sessions",
                        BOOLEANS.toArray(String[]::new))
                .query("clientType", String.class, "only this client type", TYPES.toArray(String[]::new))
                .query("username", String.class, "only this user name (exact)")
                .query("address", String.class, "only client addresses starting with this (an IP address, or a"
                        + " prefix of one such as 10.1.)")
                .reply(200, "one page", SessionModels.SessionPage.class)
                .handle(this::list);
        table.get(SESSIONS + "/{clientId}").id("getSession").tag("sessions")
                .summary("One session in detail: connection, subscriptions, queued messages, will, in-flight"
                        + " messages; the client ID URL-encoded (a '/' as %2F)")
                .reply(200, "the session", SessionModels.SessionDetail.class)
                .reply(404, "no session with this client ID", ApiModels.ErrorBody.class)
                .handle(this::get);
        table.post(SESSIONS + "/{clientId}/disconnect").id("disconnectSession").tag("sessions")
                .summary("Disconnect the client with DISCONNECT 0x98 Administrative action (MQTT 3.1.1: its"
                        + " connection is closed) on whichever node it is connected to; its will is published"
                        + " and its session stays")
                .reply(202, "the node holding the session was told")
                .reply(404, "no session with this client ID", ApiModels.ErrorBody.class)
                .reply(409, "the client is not connected", ApiModels.ErrorBody.class)
                .handle(ctx -> disconnect(ctx, false));
        table.delete(SESSIONS + "/{clientId}").id("deleteSession").tag("sessions")
                .summary("End the session as its expiry would: disconnect the client (0x98) if connected, publish"
                        + " its will, drop its subscriptions, its DEVICE queue (counted as dropped, reason"
                        + " session_ended) or APPLICATION backlog, and its state on every node")
                .reply(204, "the node holding the session (or the cluster, for a gone node's) was told")
                .reply(404, "no session with this client ID", ApiModels.ErrorBody.class)
                .handle(ctx -> disconnect(ctx, true));
        table.get(SUBSCRIPTIONS).id("listSubscriptions").tag("sessions")
                .summary("List the cluster's subscriptions, by client ID then topic filter")
                .paged()
                .query("filter", String.class, "only topic filters containing this text (an exact filter matches"
                        + " itself)")
                .query("clientId", String.class, "only this client's subscriptions")
                .reply(200, "one page", SessionModels.SubscriptionPage.class)
                .handle(this::subscriptions);
    }

    private void list(Context ctx) {
        Paging paging = Paging.of(ctx);
        String prefix = Paging.filter(ctx, "clientIdPrefix");
        String node = Paging.filter(ctx, "node");
        String connected = Paging.filter(ctx, "connected", BOOLEANS);
        String type = Paging.filter(ctx, "clientType", TYPES);
        String username = Paging.filter(ctx, "username");
        String address = Paging.filter(ctx, "address");
        Predicate<SessionState> keep = s -> (node == null || node.equals(s.nodeId()))
                && (connected == null || Boolean.parseBoolean(connected) == s.connected())
                && (type == null || type.equals(s.clientType()))
                && (username == null || s.client() != null && username.equals(s.client().username()))
                && (address == null || s.client() != null && s.client().address() != null
                        && s.client().address().startsWith(address));
        Stream<SessionState> sessions = api.sessions().sessions(prefix == null ? "" : prefix);
        if (prefix != null) {
            sessions = sessions.takeWhile(s -> s.clientId().startsWith(prefix)); // sorted: the rest do not
        }
        Page<SessionState> page = page(sessions.filter(keep), paging);
        ApiJson.write(ctx, 200, new SessionModels.SessionPage(
                page.items.stream().map(SessionModels.SessionItem::of).toList(), page.total, paging.page(),
                paging.pageSize()));
    }

    private void get(Context ctx) {
        SessionsView view = api.sessions();
        SessionState s = session(ctx, view);
        SessionState.ClientInfo c = s.client();
        List<SessionModels.SubscriptionItem> subscriptions = view.subscriptions(s.clientId()).stream()
                .sorted(BY_FILTER).map(SessionModels.SubscriptionItem::of).toList();
        Long queued = null;
        Long lag = null;
        if (s.queuing() && "DEVICE".equals(s.clientType())) {
            queued = view.deviceQueued(s.clientId());
        } else if (s.queuing() && "APPLICATION".equals(s.clientType())) {
            lag = view.applicationBacklog(s.clientId());
        }
        Integer inFlight = null;
        Integer inMemory = null;
        String knownOn = null;
        if (s.nodeId().equals(view.nodeId())) {
            SessionView local = view.local(s.clientId());
            if (local != null) {
                inFlight = local.inFlight();
                inMemory = local.queued();
            }
        } else {
            knownOn = s.nodeId();
        }
        long expires = s.expiresAtMillis();
        ApiJson.write(ctx, 200, new SessionModels.SessionDetail(s.clientId(), s.nodeId(), view.nodeAlive(s),
                s.connected(), c == null ? null : c.address(), c == null ? null : c.username(), s.clientType(),
                c == null ? null : c.protocol(),
                c == null || c.connectedAtMillis() == 0 ? null : Instant.ofEpochMilli(c.connectedAtMillis()),
                s.connected() ? null : Instant.ofEpochMilli(s.disconnectedAtMillis()),
                c == null ? null : c.keepAliveSeconds(), s.queuing(), s.sessionExpirySeconds(),
                expires == Long.MAX_VALUE ? null : Instant.ofEpochMilli(expires), subscriptions, queued, lag,
                SessionModels.WillView.of(s.will()), inFlight, inMemory, knownOn));
    }

    private void disconnect(Context ctx, boolean endSession) {
        SessionsView view = api.sessions();
        SessionState s = session(ctx, view);
        if (!endSession && !s.connected()) {
            throw ApiException.conflict("client '" + AdminApi.abbreviate(s.clientId()) + "' is not connected");
        }
        if (!endSession && !view.nodeAlive(s)) {
            throw ApiException.conflict("client '" + AdminApi.abbreviate(s.clientId()) + "' was connected to node '"
                    + AdminApi.abbreviate(s.nodeId()) + "', which is gone; the cluster is ending that connection");
        }
        try {
            view.disconnect(s, endSession);
        } catch (IllegalStateException e) {
            throw ApiException.unavailable("the node holding the session could not be told: " + e.getMessage());
        }
        ctx.status(endSession ? 204 : 202);
    }

    private void subscriptions(Context ctx) {
        Paging paging = Paging.of(ctx);
        String filter = Paging.filter(ctx, "filter");
        String clientId = Paging.filter(ctx, "clientId");
        SessionsView view = api.sessions();
        Stream<String> clients = clientId != null ? Stream.of(clientId)
                : view.sessions("").map(SessionState::clientId);
        Stream<Subscription> all = clients.flatMap(id -> view.subscriptions(id).stream().sorted(BY_FILTER));
        if (filter != null) {
            all = all.filter(s -> s.topicFilter().contains(filter));
        }
        Page<Subscription> page = page(all, paging);
        ApiJson.write(ctx, 200, new SessionModels.SubscriptionPage(
                page.items.stream().map(SessionModels.SubscriptionItem::of).toList(), page.total, paging.page(),
                paging.pageSize()));
    }

    /** The session named by the path, or a 404. */
    private static SessionState session(Context ctx, SessionsView view) {
        String clientId = ctx.pathParam("clientId");
        return view.session(clientId).orElseThrow(() ->
                ApiException.notFound("no session with client ID '" + AdminApi.abbreviate(clientId) + "'"));
    }

    private record Page<T>(List<T> items, long total) {
    }

    /** One pass: the items of the page asked for, and how many there are in all. */
    private static <T> Page<T> page(Stream<T> items, Paging paging) {
        long from = (long) paging.page() * paging.pageSize();
        long to = from + paging.pageSize();
        List<T> out = new ArrayList<>(Math.min(paging.pageSize(), 256));
        long[] n = {0};
        items.forEachOrdered(item -> {
            if (n[0] >= from && n[0] < to) {
                out.add(item);
            }
            n[0]++;
        });
        return new Page<>(out, n[0]);
    }
}
