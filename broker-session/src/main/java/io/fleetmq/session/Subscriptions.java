package io.fleetmq.session;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.ProtocolViolation;
import io.fleetmq.core.mqtt.ReasonCode;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.SharedSubscription;
import io.fleetmq.core.topic.TopicNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The session's subscriptions, by the filter as subscribed ({@code $share/g/f} for a shared one):
 * kept here, in the node's subscription trie, and told to the other nodes.
 */
final class Subscriptions {

    /**
     * What a SUBSCRIBE did: its SUBACK, and the retained messages due for its new subscriptions
     * [MQTT-3.3.1-9, -10, -11], to be delivered after the SUBACK.
     */
    record Subscribed(Packet.SubAck subAck, List<Delivery> retained) {
    }

    private final String clientId;
    private final SessionServices services;
    private final Supplier<ClientAccess> access;
    private final LongSupplier epoch;
    private final Map<String, Subscription> byFilter = new HashMap<>();

    Subscriptions(String clientId, SessionServices services, Supplier<ClientAccess> access, LongSupplier epoch) {
        this.clientId = clientId;
        this.services = services;
        this.access = access;
        this.epoch = epoch;
    }

    boolean isEmpty() {
        return byFilter.isEmpty();
    }

    /** The subscriptions by the filter as subscribed; not to be changed. */
    Map<String, Subscription> all() {
        return byFilter;
    }

    /**
     * Subscribes; {@code backlogs} is the reader of a persistent APPLICATION session's backlogs,
     * null for any other session.
     */
    Subscribed subscribe(Packet.Subscribe s, AppBacklogReader backlogs) {
        List<ReasonCode> codes = new ArrayList<>(s.subscriptions().size());
        List<Subscription> added = new ArrayList<>();
        for (Packet.TopicSubscription t : s.subscriptions()) {
            SharedSubscription shared;
            try {
                shared = SharedSubscription.parse(t.filter());
                TopicNames.validateTopicFilter(shared != null ? shared.filter() : t.filter());
            } catch (InvalidTopicException e) {
                codes.add(ReasonCode.TOPIC_FILTER_INVALID);
                continue;
            }
            if (shared != null && t.noLocal()) {
                // [MQTT-3.8.3-4] No Local on a shared subscription is a protocol error.
                throw new ProtocolViolation(ReasonCode.PROTOCOL_ERROR, "No Local set on shared subscription " + t.filter());
            }
            String filter = shared != null ? shared.filter() : t.filter();
            String group = shared != null ? shared.group() : null;
            // A shared subscription is checked on its filter; a refused one gets no retained messages either.
            ReasonCode allowed = access.get().authorizeSubscribe(t.filter(), t.qos());
            if (allowed.isError()) {
                codes.add(allowed);
                continue;
            }
            if (shared != null && backlogs != null && !backlogs.sharedKnown(group, filter)) {
                // The group's backlog topic is where its messages wait; without it the subscription cannot work.
                codes.add(ReasonCode.UNSPECIFIED_ERROR);
                continue;
            }
            if (!byFilter.containsKey(t.filter()) && byFilter.size() >= services.limits().maxSubscriptions()) {
                // A session's subscriptions are bounded; replacing one of them always works.
                LimitsExceeded.count(services.meters(), LimitsExceeded.SUBSCRIPTIONS);
                codes.add(ReasonCode.QUOTA_EXCEEDED);
                continue;
            }
            Subscription sub = new Subscription(clientId, filter, group, t.qos(), t.noLocal(), t.retainAsPublished(),
                    t.retainHandling(), s.subscriptionId(), services.nodeId());
            Subscription previous = byFilter.put(t.filter(), sub);
            services.subscriptions().add(sub);
            codes.add(grantedQos(t.qos()));
            if (shared != null && backlogs != null) {
                backlogs.subscribed(t.filter(), sub);
            }
            // Retained messages on subscribe, per Retain Handling [MQTT-3.3.1-9, -10, -11]; never for shared.
            if (group == null && (t.retainHandling() == 0 || t.retainHandling() == 1 && previous == null)) {
                added.add(sub);
            }
        }
        changed();
        return new Subscribed(new Packet.SubAck(s.packetId(), codes, null), retainedFor(added));
    }

    private List<Delivery> retainedFor(List<Subscription> added) {
        List<Delivery> due = new ArrayList<>();
        for (Subscription sub : added) {
            for (BrokerMessage retained : services.retained().match(sub.topicFilter())) {
                if (retained.isExpired(services.clock().getAsLong())) {
                    continue; // expired retained messages are no longer retained [MQTT-3.3.2-5]
                }
                List<Integer> ids = sub.subscriptionId() > 0 ? List.of(sub.subscriptionId()) : List.of();
                due.add(new Delivery(retained, Math.min(retained.qos(), sub.qos()), true, ids));
            }
        }
        return due;
    }

    /** Unsubscribes; {@code backlogs} as for {@link #subscribe}. */
    Packet.UnsubAck unsubscribe(Packet.Unsubscribe u, AppBacklogReader backlogs) {
        List<ReasonCode> codes = new ArrayList<>(u.filters().size());
        for (String raw : u.filters()) {
            Subscription removed = byFilter.remove(raw);
            if (removed != null) {
                services.subscriptions().remove(clientId, removed.topicFilter(), removed.shareGroup());
                if (backlogs != null) {
                    backlogs.unsubscribed(raw);
                }
            }
            codes.add(removed != null ? ReasonCode.SUCCESS : ReasonCode.NO_SUBSCRIPTION_EXISTED);
        }
        if (codes.contains(ReasonCode.SUCCESS)) {
            changed();
        }
        return new Packet.UnsubAck(u.packetId(), codes, null);
    }

    /**
     * Removes the subscriptions that {@code rights} no longer allow (the client's rules changed, or it
     * came back with other rights), here and on every node; {@code backlogs} as for {@link #subscribe}.
     *
     * @return how many were removed
     */
    int keepAllowed(ClientAccess rights, AppBacklogReader backlogs) {
        List<String> forbidden = new ArrayList<>();
        for (Map.Entry<String, Subscription> e : byFilter.entrySet()) {
            if (rights.authorizeSubscribe(e.getKey(), e.getValue().qos()).isError()) {
                forbidden.add(e.getKey());
            }
        }
        for (String raw : forbidden) {
            Subscription removed = byFilter.remove(raw);
            services.subscriptions().remove(clientId, removed.topicFilter(), removed.shareGroup());
            if (backlogs != null) {
                backlogs.unsubscribed(raw);
            }
        }
        if (!forbidden.isEmpty()) {
            changed();
        }
        return forbidden.size();
    }

    /**
     * The session continues here but was held by another node: its subscriptions, which every node
     * knows, move to this node.
     */
    void adopt() {
        List<Subscription> known = services.subscriptions().subscriptionsOf(clientId);
        if (known.isEmpty()) {
            return;
        }
        for (Subscription s : known) {
            Subscription here = new Subscription(clientId, s.topicFilter(), s.shareGroup(), s.qos(), s.noLocal(),
                    s.retainAsPublished(), s.retainHandling(), s.subscriptionId(), services.nodeId());
            byFilter.put(s.shareGroup() == null ? s.topicFilter()
                    : "$share/" + s.shareGroup() + "/" + s.topicFilter(), here);
            services.subscriptions().add(here);
        }
        changed();
    }

    /** The session ended: its subscriptions go, here and on every node. */
    void ended() {
        if (!services.subscriptions().removeClient(clientId).isEmpty() || !byFilter.isEmpty()) {
            byFilter.clear();
            changed();
        }
        byFilter.clear();
    }

    /** The session moved to another node, which owns its subscriptions now. */
    void movedAway() {
        byFilter.clear();
    }

    private void changed() {
        services.cluster().subscriptionsChanged(clientId, epoch.getAsLong(), List.copyOf(byFilter.values()));
    }

    private static ReasonCode grantedQos(int qos) {
        return switch (qos) {
            case 0 -> ReasonCode.SUCCESS;
            case 1 -> ReasonCode.GRANTED_QOS_1;
            default -> ReasonCode.GRANTED_QOS_2;
        };
    }
}
