package io.fleetmq.session;

import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.topic.InvalidTopicException;
import io.fleetmq.core.topic.SharedSubscription;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Where a client's packets wait, in order, before they are handled: behind a PUBLISH while Kafka's
 * producer is full or while the node's deliveries are late ({@link DeliveryBackpressure}), behind a
 * SUBSCRIBE while the backlog topic of a shared APPLICATION subscription is made. Only the
 * client's acknowledgements of the node's PUBLISH packets and PINGREQ go past the ones waiting.
 */
final class PacketGate {

    private final SessionServices services;
    private final Consumer<Runnable> tell;
    /** Packets waiting, in order; null when none wait. */
    private ArrayDeque<Runnable> held;
    /** Set while packets held for late deliveries go on after the longest wait: they do not wait again. */
    private boolean passBackpressure;

    PacketGate(SessionServices services, Consumer<Runnable> tell) {
        this.services = services;
        this.tell = tell;
    }

    /**
     * Whether {@code packet} may be handled now. If not, it waits: {@code again} (which asks once
     * more) or {@code handle} (which handles it without asking) runs when the gate opens, in order
     * with the packets held behind it.
     *
     * @param applicationBacklogs the session is a persistent APPLICATION session
     */
    boolean admit(Packet packet, boolean applicationBacklogs, Runnable again, Runnable handle) {
        if (held != null) {
            if (passes(packet)) {
                return true;
            }
            held.add(again); // in order behind a packet that waits
            return false;
        }
        if (packet instanceof Packet.Publish && !services.publishLog().hasRoom()) {
            // Kafka's producer is full (Kafka slow or away): rather than block a shared actor thread
            // in the write, this session waits. Its unsettled PUBLISH packets make the transport stop
            // reading the socket, so the publisher is slowed down by TCP.
            hold(again);
            services.meters().counter("fleetmq.publish.waits").increment();
            services.publishLog().whenRoom(() -> tell.accept(this::release));
            return false;
        }
        if (packet instanceof Packet.Publish && !passBackpressure && services.backpressure().behind()) {
            // Deliveries on this node are late: new messages wait, unacknowledged, until they caught
            // up (or for the longest wait), so publishers are slowed instead of the backlog growing.
            hold(again);
            services.backpressure().await(timedOut -> tell.accept(() -> releaseAfterBackpressure(timedOut)));
            return false;
        }
        if (packet instanceof Packet.Subscribe s && applicationBacklogs) {
            List<CompletableFuture<Boolean>> creating = ensureSharedBacklogs(s);
            if (!creating.isEmpty()) {
                // The first member of a shared APPLICATION subscription on this node: its backlog topic
                // is made (or found) without blocking this thread; the session's packets wait, in order.
                hold(handle);
                CompletableFuture.allOf(creating.toArray(CompletableFuture[]::new))
                        .whenComplete((v, e) -> tell.accept(this::release));
                return false;
            }
        }
        return true;
    }

    /**
     * Packets that go past the ones waiting: the client's acknowledgements of the node's own PUBLISH
     * packets (PUBACK, PUBREC, PUBCOMP) and PINGREQ. Nothing the client sent before them depends on
     * them, and holding them would stall what the client receives (its window stays full) and its
     * keep-alive behind its own PUBLISH. PUBREL stays in order: it belongs to the client's PUBLISH flow.
     */
    private static boolean passes(Packet packet) {
        if (packet instanceof Packet.Ack a) {
            return a.type() != Packet.AckType.PUBREL;
        }
        return packet instanceof Packet.PingReq;
    }

    private void hold(Runnable first) {
        held = new ArrayDeque<>();
        held.add(first);
    }

    /** Starts making the backlog topics of the shared subscriptions in {@code s} this node does not know yet. */
    private List<CompletableFuture<Boolean>> ensureSharedBacklogs(Packet.Subscribe s) {
        List<CompletableFuture<Boolean>> creating = new ArrayList<>();
        for (Packet.TopicSubscription t : s.subscriptions()) {
            SharedSubscription shared;
            try {
                shared = SharedSubscription.parse(t.filter());
            } catch (InvalidTopicException e) {
                continue; // answered with the SUBACK
            }
            if (shared != null && !services.appBacklogs().sharedKnown(shared.group(), shared.filter())) {
                creating.add(services.appBacklogs().ensureShared(shared.group(), shared.filter()));
            }
        }
        return creating;
    }

    /**
     * The wait for late deliveries ended. After the longest wait the held packets go on even though
     * deliveries are still late: a publisher is slowed, never stopped.
     */
    private void releaseAfterBackpressure(boolean timedOut) {
        passBackpressure = timedOut;
        try {
            release();
        } finally {
            passBackpressure = false;
        }
    }

    /** The gate opened: the held packets go on, in order, until one has to wait again. */
    private void release() {
        ArrayDeque<Runnable> waiting = held;
        held = null;
        while (waiting != null && !waiting.isEmpty()) {
            waiting.poll().run();
            if (held != null) {
                held.addAll(waiting); // held again: the rest stays behind, in order
                return;
            }
        }
    }
}
