package io.fleetmq.session;

import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.subscription.Subscription;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The connect sequence of one node, in memory: it accepts every CONNECT in order (the later one of
 * a client ID wins) and answers in a task of its own on {@code answers}, as the Kafka one answers
 * later. Set {@link #registry} before the first CONNECT.
 */
final class InMemoryConnectSequence implements ClusterPort {

    final Map<String, SessionState> sessions = new HashMap<>();
    /** Every event the sessions sent, in order. */
    final List<SessionEvent> events = new java.util.ArrayList<>();
    /** While false, CONNECTs are stored but never answered (the cluster is slow). */
    boolean answering = true;
    private final Executor answers;
    SessionRegistry registry;

    InMemoryConnectSequence(Executor answers) {
        this.answers = answers;
    }

    @Override
    public long incarnation() {
        return 1;
    }

    @Override
    public Duration connectTimeout() {
        return Duration.ofSeconds(30);
    }

    @Override
    public CompletableFuture<?> event(SessionEvent event) {
        events.add(event);
        if (event instanceof SessionEvent.Connect c && !answering) {
            return CompletableFuture.completedFuture(null);
        }
        if (event instanceof SessionEvent.Connect c) {
            SessionState old = sessions.get(c.clientId());
            long epoch = old == null ? 1 : old.epoch() + 1;
            boolean present = old != null && !c.cleanStart();
            boolean queuing = c.sessionExpirySeconds() > 0 || present && old.queuing();
            sessions.put(c.clientId(), new SessionState(c.clientId(), "node", 1, epoch, true,
                    c.sessionExpirySeconds(), 0, null, c.requestId(), c.clientType(), queuing));
            answers.execute(() -> registry.command(NodeCommand.ConnectAccepted.decided(c.requestId(), c.clientId(),
                    epoch, old, present, queuing)));
        } else if (event instanceof SessionEvent.Disconnected d) {
            SessionState s = sessions.get(d.clientId());
            long expiry = d.sessionExpirySeconds() == SessionEvent.Disconnected.KEEP_EXPIRY && s != null
                    ? s.sessionExpirySeconds() : d.sessionExpirySeconds();
            if (s != null && s.epoch() == d.epoch() && expiry == 0) {
                sessions.remove(d.clientId());
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public Optional<SessionState> session(String clientId) {
        return Optional.ofNullable(sessions.get(clientId));
    }

    @Override
    public void subscriptionsChanged(String clientId, long epoch, List<Subscription> subscriptions) {
    }
}
