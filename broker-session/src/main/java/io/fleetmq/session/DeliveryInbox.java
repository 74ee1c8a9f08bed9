package io.fleetmq.session;

import io.fleetmq.core.actor.Mailbox;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.subscription.Subscription;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deliveries from the router (any thread) on their way into the session's actor: bounded, and
 * taken in shares of {@link #DELIVERIES_PER_TURN}, so that a large backlog is written in bulk yet
 * waits behind the other actors' turns.
 */
final class DeliveryInbox {

    private static final Logger log = LoggerFactory.getLogger(DeliveryInbox.class);
    /** Deliveries taken from the inbox per turn; the rest wait for the actor's next turn. */
    static final int DELIVERIES_PER_TURN = 1024;

    /** A message the router handed over, with this client's subscriptions that matched it. */
    private record Routed(BrokerMessage message, List<Subscription> matched) {
    }

    private final String clientId;
    private final SessionServices services;
    private final Mailbox mailbox;
    private final BiConsumer<BrokerMessage, List<Subscription>> sink;
    private final ConcurrentLinkedQueue<Routed> inbox = new ConcurrentLinkedQueue<>();
    /** Deliveries in the inbox; bounds what a slow subscriber piles up. */
    private volatile int pending;
    /** Set while a task that takes from the inbox is told or running; only its winner tells one. */
    private volatile boolean scheduled;
    // Updated through VarHandles, not Atomic* objects: one inbox per connection.
    private static final VarHandle PENDING;
    private static final VarHandle SCHEDULED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            PENDING = lookup.findVarHandle(DeliveryInbox.class, "pending", int.class);
            SCHEDULED = lookup.findVarHandle(DeliveryInbox.class, "scheduled", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private final Runnable take = this::take;
    /** The inbox still held deliveries when this turn's share was taken; the end of the turn tells the next. */
    private boolean backlog;

    /** @param sink takes each delivery, in the actor's turn */
    DeliveryInbox(String clientId, SessionServices services, Mailbox mailbox,
            BiConsumer<BrokerMessage, List<Subscription>> sink) {
        this.clientId = clientId;
        this.services = services;
        this.mailbox = mailbox;
        this.sink = sink;
    }

    /** Any thread: a message routed to this client. */
    void offer(BrokerMessage message, List<Subscription> matched) {
        MqttLimits limits = services.limits();
        if (pending >= limits.maxQueuedMessages() + limits.maxQueuedQos0()) {
            // The session cannot keep up: drop here rather than grow the mailbox without bound.
            services.drops().count(message.qos() == 0 ? MessageDrops.Reason.QOS0_QUEUE_FULL
                    : MessageDrops.Reason.SESSION_QUEUE_FULL);
            return;
        }
        PENDING.getAndAdd(this, 1);
        inbox.offer(new Routed(message, matched));
        if (SCHEDULED.compareAndSet(this, false, true) && !mailbox.tell(take)) {
            discard();
        }
    }

    /** The mailbox is closed (the session ended): what waits in the inbox is counted as dropped. */
    private void discard() {
        scheduled = false;
        for (Routed r = inbox.poll(); r != null; r = inbox.poll()) {
            PENDING.getAndAdd(this, -1);
            services.drops().count(MessageDrops.Reason.NO_SESSION, clientId, r.message().topic());
        }
    }

    /** Takes this turn's share of the inbox; the rest waits for the next turn (see {@link #endOfTurn}). */
    private void take() {
        DeliveryBackpressure backpressure = services.backpressure();
        boolean measure = backpressure.enabled();
        long now = measure ? services.clock().getAsLong() : 0;
        try {
            for (int i = 0; i < DELIVERIES_PER_TURN; i++) {
                Routed r = inbox.poll();
                if (r == null) {
                    break;
                }
                PENDING.getAndAdd(this, -1);
                if (measure) {
                    backpressure.arrived(r.message(), now); // before any wait for the client's window or socket
                }
                try {
                    sink.accept(r.message(), r.matched());
                } catch (RuntimeException e) {
                    services.drops().count(MessageDrops.Reason.DELIVERY_FAILED, clientId, r.message().topic());
                    log.warn("{}: a delivery failed; continuing with the next", ClientText.of(clientId), e);
                }
            }
        } finally {
            if (!inbox.isEmpty()) {
                backlog = true; // stays scheduled: no other take is told meanwhile
            } else {
                scheduled = false;
                // A delivery that arrived between the last poll and the line above found the flag still set.
                if (!inbox.isEmpty() && SCHEDULED.compareAndSet(this, false, true)) {
                    backlog = true;
                }
            }
        }
    }

    /** After every mailbox turn: the next share of a backlog goes behind the other actors' turns. */
    void endOfTurn() {
        if (backlog) {
            backlog = false;
            if (!mailbox.tell(take)) {
                discard();
            }
        }
    }
}
