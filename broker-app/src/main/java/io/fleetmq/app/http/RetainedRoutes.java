package io.fleetmq.app.http;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.TopicNames;
import io.javalin.http.Context;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code /api/v1/retained}: the retained messages this node knows (every node holds the whole
 * cluster's), read by topic filter or topic, and deleted. A deletion is what an MQTT client's empty
 * retained PUBLISH is: appended to the publish log and from there applied by every node, so no node
 * keeps a copy; subscribers of the topic get the empty message, as they would from a client.
 *
 * <p>Expired messages (their Message Expiry Interval passed) are never sent to subscribers, so they
 * are not listed or read here either; a deletion removes them all the same.
 */
final class RetainedRoutes {

    static final String PATH = AdminApi.PREFIX + "/retained";
    /** A list leaves out payloads above this size, so a page stays a sensible size; the topic's read gives it. */
    static final int LIST_PAYLOAD_LIMIT = 64 * 1024;

    private final AdminApi api;

    RetainedRoutes(AdminApi api) {
        this.api = api;
    }

    void addTo(RouteTable table) {
        table.get(PATH).id("listRetained").tag("retained")
                .summary("List retained messages whose topics match an MQTT topic filter, by topic")
                .query("filter", String.class, "an MQTT topic filter (default '#'; as in MQTT, a filter starting"
                        + " with a wildcard does not match topics starting with '$')")
                .paged()
                .reply(200, "one page", RetainedModels.RetainedPage.class)
                .handle(serving(this::list));
        table.get(PATH + "/{topic}").id("getRetained").tag("retained")
                .summary("Read the retained message of a topic (the topic URL-encoded: '/' as %2F)")
                .reply(200, "the message", RetainedModels.RetainedMessageView.class)
                .reply(404, "the topic has no retained message", ApiModels.ErrorBody.class)
                .handle(serving(this::get));
        table.delete(PATH + "/{topic}").id("deleteRetained").tag("retained")
                .summary("Delete the retained message of a topic on every node (as an empty retained PUBLISH does)")
                .reply(204, "stored in Kafka; this node forgets it at once, the others within moments")
                .reply(404, "the topic has no retained message", ApiModels.ErrorBody.class)
                .handle(serving(this::delete));
        table.delete(PATH).id("deleteRetainedMatching").tag("retained")
                .summary("Delete the retained messages of every topic an MQTT topic filter matches, on every node")
                .query("filter", String.class, "an MQTT topic filter; required ('#' deletes all but '$' topics)")
                .reply(200, "how many were deleted", RetainedModels.RetainedDeleted.class)
                .handle(serving(this::deleteMatching));
    }

    /**
     * {@code handler}, answering 503 when the node cannot serve now: the node's side says so with an
     * {@link IllegalStateException} (fenced and rejoining, or stopping).
     */
    static io.javalin.http.Handler serving(io.javalin.http.Handler handler) {
        return ctx -> {
            try {
                handler.handle(ctx);
            } catch (IllegalStateException e) {
                throw ApiException.unavailable("the node cannot serve now: " + e.getMessage());
            }
        };
    }

    private RetainedMessages messages() {
        RetainedMessages m = api.retainedMessages();
        if (m == null) {
            throw ApiException.unavailable("the node is starting; try again shortly");
        }
        return m;
    }

    private void list(Context ctx) {
        String filter = filter(ctx, "#");
        Paging paging = Paging.of(ctx);
        RetainedMessages messages = messages();
        long now = messages.now();
        List<BrokerMessage> found = new ArrayList<>(messages.matching(filter));
        found.removeIf(m -> m.isExpired(now));
        found.sort(Comparator.comparing(BrokerMessage::topic));
        int from = (int) Math.min((long) paging.page() * paging.pageSize(), found.size());
        int to = Math.min(from + paging.pageSize(), found.size());
        List<RetainedModels.RetainedMessageView> items = new ArrayList<>(to - from);
        for (BrokerMessage m : found.subList(from, to)) {
            items.add(MessageViews.retained(m, now, LIST_PAYLOAD_LIMIT));
        }
        ApiJson.write(ctx, 200, new RetainedModels.RetainedPage(items, found.size(), paging.page(), paging.pageSize()));
    }

    private void get(Context ctx) {
        String topic = topic(ctx);
        RetainedMessages messages = messages();
        BrokerMessage m = messages.get(topic);
        long now = messages.now();
        if (m == null || m.isExpired(now)) {
            throw notFound(topic);
        }
        ApiJson.write(ctx, 200, MessageViews.retained(m, now, Integer.MAX_VALUE));
    }

    private void delete(Context ctx) {
        String topic = topic(ctx);
        RetainedMessages messages = messages();
        if (messages.get(topic) == null) {
            throw notFound(topic);
        }
        settled(messages, List.of(topic));
        PublishRoutes.await(messages.publish(deletion(topic, messages.now())));
        ctx.status(204);
    }

    /** How long a deletion waits for the changes it deletes to reach the retained log. */
    static final Duration SETTLE_WAIT = Duration.ofSeconds(5);

    /**
     * Waits (up to {@link #SETTLE_WAIT}) until no retained change of {@code topics} that this node
     * acknowledged is still on its way to the retained log. A client's retained PUBLISH is routed
     * from its publisher's partition, the deletion from the API's: without the wait a message shown
     * and deleted here could reach the retained log after its deletion and be retained again.
     */
    private static void settled(RetainedMessages messages, List<String> topics) {
        long deadline = System.nanoTime() + SETTLE_WAIT.toNanos();
        for (String topic : topics) {
            while (messages.isPending(topic) && System.nanoTime() - deadline < 0) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void deleteMatching(Context ctx) {
        if (ctx.queryParam("filter") == null) {
            throw ApiException.badRequest("filter", "is required ('#' for every topic not starting with '$')");
        }
        String filter = filter(ctx, null);
        RetainedMessages messages = messages();
        List<BrokerMessage> matching = messages.matching(filter);
        settled(messages, matching.stream().map(BrokerMessage::topic).toList());
        long now = messages.now();
        List<CompletableFuture<?>> stored = new ArrayList<>();
        for (BrokerMessage m : matching) {
            stored.add(messages.publish(deletion(m.topic(), now)));
        }
        PublishRoutes.await(CompletableFuture.allOf(stored.toArray(CompletableFuture[]::new)));
        ApiJson.write(ctx, 200, new RetainedModels.RetainedDeleted(stored.size()));
    }

    /** The empty retained PUBLISH that deletes a topic's retained message [MQTT-3.3.1-6]. */
    private static BrokerMessage deletion(String topic, long now) {
        return BrokerMessage.of(topic, new byte[0], 0, true, PublishRoutes.PUBLISHER_ID, now);
    }

    /** The {@code filter} query parameter, checked as a SUBSCRIBE's topic filter; {@code absent} if not given. */
    private static String filter(Context ctx, String absent) {
        String filter = ctx.queryParam("filter");
        if (filter == null) {
            return absent;
        }
        if (filter.isEmpty()) {
            throw ApiException.badRequest("filter", "must not be empty");
        }
        if (filter.startsWith("$share/")) {
            throw ApiException.badRequest("filter", "a shared subscription names no topics of its own; leave out"
                    + " '$share/<group>/'");
        }
        try {
            TopicNames.validateTopicFilter(filter);
        } catch (InvalidTopicException e) {
            throw ApiException.badRequest("filter", e.getMessage());
        }
        return filter;
    }

    /**
     * The topic of the path, taken from the request's raw path and decoded here: '%2F' is a '/' of
     * the topic, and '+' a space, as form encoders write it (a topic name never holds a '+';
     * '%2B' is one, and so an invalid topic name).
     */
    static String topic(Context ctx) {
        String uri = ctx.req().getRequestURI();
        String prefix = PATH + "/";
        int at = uri.indexOf(prefix);
        String raw = at < 0 ? ctx.pathParam("topic") : uri.substring(at + prefix.length());
        String topic;
        try {
            topic = URLDecoder.decode(raw, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("topic", "is not correctly URL-encoded");
        }
        if (topic.isEmpty()) {
            throw ApiException.badRequest("topic", "must not be empty");
        }
        try {
            TopicNames.validateTopicName(topic);
        } catch (InvalidTopicException e) {
            throw ApiException.badRequest("topic", e.getMessage());
        }
        return topic;
    }

    private static ApiException notFound(String topic) {
        return ApiException.notFound("no retained message on topic '" + AdminApi.abbreviate(topic) + "'");
    }
}
