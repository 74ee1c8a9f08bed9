package io.fleetmq.session.delivery;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.subscription.Matches;
import io.fleetmq.core.subscription.SharedGroupKey;
import io.fleetmq.core.subscription.SharedGroupSelector;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.session.MessageDrops;
import io.fleetmq.session.SessionActor;
import io.fleetmq.session.SessionRegistry;
import java.util.List;
import java.util.Map;

/**
 * Routes a stored PUBLISH to the sessions on this node: every matching non-shared subscriber gets
 * one copy (its overlapping subscriptions merged by the session), each shared group one copy for
 * one member, preferring members that are connected.
 */
public final class LocalRouter {

    private final SubscriptionTrie subscriptions;
    private final SessionRegistry sessions;
    private final SharedGroupSelector selector;
    private final MessageDrops drops;

    public LocalRouter(SubscriptionTrie subscriptions, SessionRegistry sessions, MessageDrops drops) {
        this.subscriptions = subscriptions;
        this.sessions = sessions;
        this.drops = drops;
        this.selector = new SharedGroupSelector();
    }

    public void route(BrokerMessage message) {
        Matches matches = subscriptions.match(message.topic());
        for (Map.Entry<String, List<Subscription>> e : Matches.byClient(matches.direct()).entrySet()) {
            deliver(e.getKey(), message, e.getValue());
        }
        for (Map.Entry<SharedGroupKey, List<Subscription>> group : matches.shared().entrySet()) {
            Subscription member = selector.select(group.getKey(), group.getValue(), this::isOnline);
            if (member == null) {
                // Nobody connected: the message goes to one member's session queue all the same.
                member = selector.select(group.getKey(), group.getValue(), s -> sessions.get(s.clientId()) != null);
            }
            if (member != null) {
                deliver(member.clientId(), message, List.of(member));
            } else {
                drops.count(MessageDrops.Reason.NO_SESSION);
            }
        }
    }

    private boolean isOnline(Subscription s) {
        SessionActor actor = sessions.get(s.clientId());
        return actor != null && actor.isOnline();
    }

    private void deliver(String clientId, BrokerMessage message, List<Subscription> matched) {
        SessionActor actor = sessions.get(clientId);
        if (actor == null) {
            drops.count(MessageDrops.Reason.NO_SESSION);
            return;
        }
        actor.deliver(message, matched);
    }
}
