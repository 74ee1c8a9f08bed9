package io.fleetmq.session;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.mqtt.Packet;
import io.fleetmq.core.mqtt.Packet.Ack;
import io.fleetmq.core.mqtt.Packet.AckType;
import io.fleetmq.core.mqtt.ReasonCode;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * What goes from the session to its client: the QoS 1/2 messages in flight (in send order, for
 * resending on reconnect [MQTT-4.4.0-1]) within the client's Receive Maximum, their packet
 * identifiers and DUP, the topic aliases we assign, the QoS 1/2 messages waiting in memory for
 * room, and QoS 0 held while the socket is full.
 */
final class OutboundFlow {

    /**
     * Where a message in flight came from when that is not the session's memory: a store that keeps
     * it until it is delivered, and is told how its flow goes.
     */
    interface Origin {

        /** Sent for the first time with {@code packetId}. */
        void sent(int packetId);

        /** PUBREC came and PUBREL went out for {@code packetId}. */
        void released(int packetId);

        /** The flow completed (acknowledged, or refused by the client): the store lets it go. */
        void completed();
    }

    /** A QoS 1/2 PUBLISH sent; {@code released} once PUBREC came and PUBREL went out. */
    record InFlight(Packet.Publish publish, boolean released, Origin origin) {
    }

    private final String clientId;
    private final Traffic sent;
    private final SessionServices services;
    private final Connection connection;
    private final LinkedHashMap<Integer, InFlight> inFlight = new LinkedHashMap<>();
    /**
     * QoS 1/2 waiting for room in the client's receive window (or for the client to come back).
     * Both queues start at their smallest: most sessions never queue, and an idle session's
     * memory is what limits connections per node. They grow (by doubling) on first use.
     */
    private final ArrayDeque<Delivery> queued = new ArrayDeque<>(1);
    /** QoS 0 held while the socket is not writable. */
    private final ArrayDeque<Delivery> qos0Queued = new ArrayDeque<>(1);
    /** Topic aliases we assigned on this connection; null until the first (most clients allow none). */
    private Map<String, Integer> aliases;
    private int lastPacketId;
    /** Room promised to a store read still under way; no one else takes it meanwhile. */
    private int reserved;

    OutboundFlow(String clientId, SessionServices services, Connection connection) {
        this.clientId = clientId;
        this.sent = Traffic.sent(services.meters());
        this.services = services;
        this.connection = connection;
    }

    /**
     * Free room in the client's receive window [MQTT-3.3.4-7]: the one place it is computed. Room
     * reserved for a store read under way is not free.
     */
    int room() {
        return connection.receiveMaximum() - inFlight.size() - reserved;
    }

    /** Takes {@code n} of the free room for a read whose answer comes later. */
    void reserve(int n) {
        reserved += n;
    }

    /** The read answered: its reserved room is free again, for what it brought first. */
    void release(int n) {
        reserved = Math.max(0, reserved - n);
    }

    int inFlightCount() {
        return inFlight.size();
    }

    int queuedCount() {
        return queued.size();
    }

    /**
     * Takes a delivery: QoS 0 is sent now or held while the socket is full; QoS 1/2 joins the queue.
     *
     * @return whether the QoS 1/2 queue grew (the caller then sends what fits)
     */
    boolean enqueue(Delivery d) {
        if (d.qos() == 0) {
            if (!connection.isOnline()) {
                services.drops().count(MessageDrops.Reason.CLIENT_OFFLINE_QOS0, clientId, d.message().topic());
                return false;
            }
            // The socket may have drained while its writable signal is still on its way through
            // the mailbox: what waits goes first, in order, without waiting for that signal.
            drainQos0();
            if (qos0Queued.isEmpty() && connection.isWritable()) {
                send(d, null, 0, false);
            } else {
                connection.flush(); // the socket is full: let it start on what this turn wrote
                if (qos0Queued.size() >= services.limits().maxQueuedQos0()) {
                    services.drops().count(MessageDrops.Reason.QOS0_QUEUE_FULL, clientId, d.message().topic());
                } else {
                    qos0Queued.add(d);
                }
            }
            return false;
        }
        if (queued.size() >= services.limits().maxQueuedMessages()) {
            Delivery oldest = queued.poll(); // the oldest goes, so a returning client gets the newest
            services.drops().count(MessageDrops.Reason.SESSION_QUEUE_FULL, clientId, oldest.message().topic());
        }
        queued.add(d);
        return true;
    }

    /**
     * Sends queued QoS 1/2 messages while the client's receive window has room [MQTT-3.3.4-7] and
     * its socket takes more: a client that stops reading leaves them in the bounded queue (or in
     * Redis or Kafka) rather than in the node's write buffers.
     */
    void sendQueued() {
        while (connection.isWritable() && room() > 0 && !queued.isEmpty()) {
            send(queued.poll(), null, 0, false);
        }
    }

    /** Sends the QoS 0 messages held while the socket was full, as far as it is writable now. */
    void drainQos0() {
        while (connection.isWritable() && !qos0Queued.isEmpty()) {
            send(qos0Queued.poll(), null, 0, false);
        }
    }

    /**
     * Sends a delivery; {@code origin} is the store it came from (null for memory) and
     * {@code previousPacketId} the packet identifier it was sent with before (0 if never), which it
     * keeps, with DUP set, unless another flow uses it now.
     *
     * @return false if it was dropped (expired, too large) instead
     */
    boolean send(Delivery d, Origin origin, int previousPacketId, boolean redelivery) {
        BrokerMessage m = d.message();
        long remaining = m.remainingExpirySeconds(services.clock().getAsLong());
        if (m.expiryIntervalSeconds() >= 0 && remaining <= 0) {
            services.drops().count(MessageDrops.Reason.EXPIRED, clientId, m.topic()); // [MQTT-3.3.2-5]
            return false;
        }
        boolean v5 = connection.version().isV5();
        boolean resend = previousPacketId > 0 && !inFlight.containsKey(previousPacketId) && d.qos() > 0;
        int packetId = d.qos() == 0 ? 0 : resend ? previousPacketId : nextPacketId();
        Packet.Publish publish = new Packet.Publish(m.topic(), 0, m.payload(), d.qos(), d.retain(), false, packetId,
                v5 ? remaining : -1, v5 ? m.payloadFormat() : -1, v5 ? m.contentType() : null,
                v5 ? m.responseTopic() : null, v5 ? m.correlationData() : null,
                v5 ? m.userProperties() : List.of(), v5 ? d.subscriptionIds() : List.of());
        long maximumPacketSize = connection.maximumPacketSize();
        if (maximumPacketSize > 0 && PacketSizes.publish(publish, v5) > maximumPacketSize) {
            services.drops().count(MessageDrops.Reason.PACKET_TOO_LARGE, clientId, m.topic()); // [MQTT-3.1.2-25]
            return false;
        }
        if (d.qos() > 0) {
            inFlight.put(packetId, new InFlight(publish, false, origin));
            if (origin != null && !resend) {
                origin.sent(packetId); // survives a reconnect
            }
        }
        connection.write(withAlias(resend || redelivery && d.qos() > 0 ? publish.withDup(true) : publish, true));
        sent.count(d.qos(), m.payload().length);
        return true;
    }

    /** Whether a flow uses {@code packetId} now. */
    boolean inUse(int packetId) {
        return inFlight.containsKey(packetId);
    }

    /** Continues a QoS 2 flow from a store whose PUBREC came before the client left: PUBREL again [MQTT-4.4.0-1]. */
    void resumeReleased(int packetId, Origin origin) {
        Packet.Publish placeholder = new Packet.Publish("-", 0, new byte[0], 2, false, true, packetId, -1, -1,
                null, null, null, List.of(), List.of());
        inFlight.put(packetId, new InFlight(placeholder, true, origin));
        connection.write(new Ack(AckType.PUBREL, packetId, ReasonCode.SUCCESS, null));
    }

    /**
     * An acknowledgement of ours from the client (PUBACK, PUBREC, PUBCOMP).
     *
     * @return the flow it completed, or null if none did
     */
    InFlight acknowledged(Ack a) {
        int id = a.packetId();
        InFlight f = inFlight.get(id);
        switch (a.type()) {
            case PUBACK -> {
                if (f != null && f.publish().qos() == 1) {
                    inFlight.remove(id);
                    return f;
                }
            }
            case PUBREC -> {
                if (f == null || f.publish().qos() != 2) {
                    connection.write(new Ack(AckType.PUBREL, id, ReasonCode.PACKET_IDENTIFIER_NOT_FOUND, null));
                } else if (a.reasonCode().isError()) {
                    inFlight.remove(id); // the client refused it; with an error PUBREC the QoS 2 flow ends
                    return f;
                } else {
                    inFlight.put(id, new InFlight(f.publish(), true, f.origin()));
                    if (f.origin() != null) {
                        f.origin().released(id); // resume with PUBREL
                    }
                    connection.write(new Ack(AckType.PUBREL, id, ReasonCode.SUCCESS, null));
                }
            }
            case PUBCOMP -> {
                if (f != null && f.released()) {
                    inFlight.remove(id);
                    return f;
                }
            }
            default -> throw new IllegalArgumentException(a.type() + " is not an acknowledgement of ours");
        }
        return null;
    }

    /** A new connection: what is in flight goes again first, in its original order, with DUP set [MQTT-4.4.0-1]. */
    void resend() {
        for (Map.Entry<Integer, InFlight> e : inFlight.entrySet()) {
            InFlight f = e.getValue();
            connection.write(f.released()
                    ? new Ack(AckType.PUBREL, e.getKey(), ReasonCode.SUCCESS, null)
                    : withAlias(f.publish().withDup(true), false));
        }
    }

    /** Forgets the flows from origins that send them again themselves. */
    void forget(Predicate<Origin> sendsAgain) {
        inFlight.values().removeIf(f -> f.origin() != null && sendsAgain.test(f.origin()));
    }

    /**
     * Drops every QoS 1/2 message, in flight or queued.
     *
     * @param keptByItsStore whether a message's origin still holds it (for the session's next reader,
     *                       or to count it itself when it deletes it)
     * @return how many of them only this session held: the caller counts their drop
     */
    int clear(Predicate<Origin> keptByItsStore) {
        long heldHere = inFlight.values().stream()
                .filter(f -> f.origin() == null || !keptByItsStore.test(f.origin())).count();
        int dropped = (int) heldHere + queued.size();
        inFlight.clear();
        queued.clear();
        return dropped;
    }

    /** The client left: QoS 0 held for it is dropped and counted; topic aliases end with the connection. */
    void disconnected() {
        qos0Queued.forEach(d -> services.drops().count(MessageDrops.Reason.CLIENT_OFFLINE_QOS0, clientId,
                d.message().topic()));
        qos0Queued.clear();
    }

    /** A new connection: topic aliases are per connection [MQTT-3.3.2-7], and so is its window. */
    void connected() {
        aliases = null;
        reserved = 0;
    }

    /**
     * Replaces the topic by an alias where the client allows aliases: a new topic gets the next
     * free alias (sent with the topic once), a known one is sent as alias only.
     */
    private Packet.Publish withAlias(Packet.Publish p, boolean mayAssign) {
        int maximum = connection.topicAliasMaximum();
        if (maximum == 0) {
            return p;
        }
        if (aliases == null) {
            aliases = new HashMap<>();
        }
        Integer alias = aliases.get(p.topic());
        String topic = p.topic();
        if (alias != null) {
            topic = "";
        } else if (mayAssign && aliases.size() < maximum) {
            alias = aliases.size() + 1;
            aliases.put(p.topic(), alias);
        } else {
            return p;
        }
        return new Packet.Publish(topic, alias, p.payload(), p.qos(), p.retain(), p.dup(), p.packetId(),
                p.messageExpirySeconds(), p.payloadFormat(), p.contentType(), p.responseTopic(), p.correlationData(),
                p.userProperties(), p.subscriptionIds());
    }

    private int nextPacketId() {
        // [MQTT-2.2.1-3] a new ID for each new QoS 1/2 PUBLISH, not one in use.
        do {
            lastPacketId = lastPacketId == 65_535 ? 1 : lastPacketId + 1;
        } while (inFlight.containsKey(lastPacketId));
        return lastPacketId;
    }
}
