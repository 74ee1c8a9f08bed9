package io.fleetmq.session.cluster;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.core.subscription.Matches;
import io.fleetmq.core.subscription.SharedGroupKey;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.core.subscription.SubscriptionTrie;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.DeadLetters;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.session.MessageDrops;
import io.fleetmq.session.SessionActor;
import io.fleetmq.session.SessionRegistry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes a stored PUBLISH (DESIGN.md, "The publish path", step 4) with the cluster's subscription
 * trie: subscribers connected here get it from their actor at once; for every other node with
 * matching subscribers, one record goes to that node's {@code downlink.<node>}, in the downlink
 * partition of the message's {@code publish} partition, so each node sees a partition's messages in
 * order. Each shared group gets the message once, for one member chosen among the connected ones.
 *
 * <p>The member is chosen from the message's position, not by a counter, so a node routing a dead
 * node's records again picks the same members and the {@link DeliveryGate} of their nodes drops the
 * repeats.
 *
 * <p>A record for many subscribers of one node is split below the Kafka record limit
 * ({@link ClusterCodec#split}); the parts go in order to the same partition. A write that fails for
 * good (the record is too large, Kafka refuses it as invalid) goes to the dead-letter topic with its
 * reason and is counted, so it cannot make the routing consumer read its batch again forever; any
 * other failure makes {@link #flushed()} false and the batch is routed again.
 */
public final class ClusterRouter {

    private static final Logger log = LoggerFactory.getLogger(ClusterRouter.class);

    private final String nodeId;
    private final SubscriptionTrie subscriptions;
    private final SessionRegistry sessions;
    private final SessionDirectory directory;
    private final Membership membership;
    private final ClusterProducer producer;
    private final BrokerTopics topics;
    private final DeliveryGate gate;
    private final MessageDrops drops;
    private final AtomicBoolean downlinkFailed = new AtomicBoolean();
    /** Targets (topic and partition or key) a write of the current batch failed for. */
    private final java.util.Set<String> failedTargets = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final DeadLetters deadLetters;
    private final int maxRecordValueBytes;
    /**
     * Writes that failed for good, waiting for {@link #flushed()} to put them in the dead-letter
     * topic: on the consumer thread, not in the producer's callback, which must not block on a send.
     */
    private final ConcurrentLinkedQueue<Runnable> toDeadLetters = new ConcurrentLinkedQueue<>();
    /**
     * The hand-offs of the batch being routed (routing thread only): the barrier waits for these, not
     * for the whole producer, which it shares with the connect sequence and the DEVICE queue notices.
     */
    private final List<CompletableFuture<?>> inFlight = new ArrayList<>();

    /**
     * @param maxRecordValueBytes the most a record value may hold (see {@code RecordLimits}): larger
     *                            downlink records are split
     */
    public ClusterRouter(String nodeId, SubscriptionTrie subscriptions, SessionRegistry sessions,
            SessionDirectory directory, Membership membership, ClusterProducer producer, BrokerTopics topics,
            DeliveryGate gate, MessageDrops drops, DeadLetters deadLetters, int maxRecordValueBytes) {
        this.deadLetters = deadLetters;
        this.maxRecordValueBytes = maxRecordValueBytes;
        this.nodeId = nodeId;
        this.subscriptions = subscriptions;
        this.sessions = sessions;
        this.directory = directory;
        this.membership = membership;
        this.producer = producer;
        this.topics = topics;
        this.gate = gate;
        this.drops = drops;
    }

    /** Routes the message stored at {@code offset} of {@code publish} partition {@code partition}. */
    public void route(BrokerMessage message, int partition, long offset) {
        Matches matches = subscriptions.match(message.topic());
        if (matches.isEmpty()) {
            return;
        }
        byte[][] encoded = new byte[1][]; // the message's encoding, made once for all its records
        Map<String, List<Subscription>> byNode = new HashMap<>(4);
        for (Map.Entry<String, List<Subscription>> client : Matches.byClient(matches.direct()).entrySet()) {
            if (application(client.getKey())) {
                toApplication(client.getKey(), new Downlink(partition, offset, message, client.getValue()), encoded);
            } else if (queuedForDevice(client.getKey(), message, client.getValue())) {
                toDeviceQueue(client.getKey(), new Downlink(partition, offset, message, client.getValue()), encoded);
            } else {
                for (Subscription s : client.getValue()) {
                    byNode.computeIfAbsent(nodeOf(s), n -> new ArrayList<>()).add(s);
                }
            }
        }
        for (Map.Entry<SharedGroupKey, List<Subscription>> group : matches.shared().entrySet()) {
            if (applicationGroup(group.getValue())) {
                // The reading member delivers with its own subscription, so the record carries one
                // member, not the whole group: a group of thousands must not make it too large.
                toSharedApplication(group.getKey(),
                        new Downlink(partition, offset, message, List.of(group.getValue().get(0))), encoded);
                continue;
            }
            Subscription member = choose(group.getValue(), partition, offset);
            if (member == null) {
                drops.count(MessageDrops.Reason.NO_SESSION, null, message.topic());
            } else if (application(member.clientId())) {
                toApplication(member.clientId(), new Downlink(partition, offset, message, List.of(member)), encoded);
            } else if (queuedForDevice(member.clientId(), message, List.of(member))) {
                toDeviceQueue(member.clientId(), new Downlink(partition, offset, message, List.of(member)), encoded);
            } else {
                byNode.computeIfAbsent(nodeOf(member), n -> new ArrayList<>()).add(member);
            }
        }
        for (Map.Entry<String, List<Subscription>> e : byNode.entrySet()) {
            String node = e.getKey();
            if (node.equals(nodeId)) {
                if (gate.admit(partition, offset)) {
                    deliverHere(message, e.getValue());
                }
            } else if (membership.isAlive(node)) {
                send(node, new Downlink(partition, offset, message, e.getValue()), encoded);
            } else {
                // Its sessions' messages wait for nobody until they reconnect elsewhere.
                for (String clientId : Matches.byClient(e.getValue()).keySet()) {
                    drops.count(MessageDrops.Reason.NODE_DOWN, clientId, message.topic());
                }
            }
        }
    }

    /**
     * Routes a message this node wrote as soon as Kafka confirmed the write (see {@link RoutingOrder}),
     * if nothing of it needs a write of its own: every subscriber it matches is a session of this node
     * that takes it straight from its actor, and each shared group's chosen member is such a session.
     * A retained message (its retained record is written when it is read back), a match on another
     * node, or a persistent DEVICE or APPLICATION session leaves it to the routing consumer. Runs on
     * the producer's I/O thread, so never blocks.
     *
     * @return whether the message is routed; false means nothing was done with it
     */
    public boolean routeHere(BrokerMessage message, int partition, long offset) {
        if (message.retain() || !membership.serving()) {
            return false;
        }
        Matches matches = subscriptions.match(message.topic());
        if (matches.isEmpty()) {
            return true;
        }
        List<Subscription> here = matches.direct();
        for (Subscription s : here) {
            if (!nodeOf(s).equals(nodeId)) {
                return false;
            }
        }
        for (Map.Entry<String, List<Subscription>> client : Matches.byClient(here).entrySet()) {
            if (application(client.getKey()) || queuedForDevice(client.getKey(), message, client.getValue())) {
                return false;
            }
        }
        if (!matches.shared().isEmpty()) {
            here = new ArrayList<>(here);
            for (List<Subscription> members : matches.shared().values()) {
                if (applicationGroup(members)) {
                    return false;
                }
                // The member the routing consumer would choose: the same position, the same member.
                Subscription member = choose(members, partition, offset);
                if (member == null || !nodeOf(member).equals(nodeId) || application(member.clientId())
                        || queuedForDevice(member.clientId(), message, List.of(member))) {
                    return false;
                }
                here.add(member);
            }
        }
        if (gate.admit(partition, offset)) {
            deliverHere(message, here);
        }
        return true;
    }

    /**
     * Whether the message goes to the client's DEVICE queue in Redis: the session is persistent, of
     * type DEVICE, and gets the message at QoS 1 or 2. QoS 0 is never queued; it goes straight to a
     * connected client.
     */
    private boolean queuedForDevice(String clientId, BrokerMessage message, List<Subscription> matched) {
        if (message.qos() == 0) {
            return false;
        }
        boolean qos0 = true;
        for (Subscription s : matched) {
            qos0 &= s.qos() == 0;
        }
        if (qos0) {
            return false;
        }
        SessionState s = directory.get(clientId).orElse(null);
        return s != null && s.queuing() && ClientTypes.DEVICE.equals(s.clientType());
    }

    /**
     * Whether the client is a persistent APPLICATION session: everything for it, QoS 0 too, goes to
     * its backlog topic, where it waits as long as the client takes (DESIGN.md, promise 4).
     */
    private boolean application(String clientId) {
        SessionState s = directory.get(clientId).orElse(null);
        return s != null && s.queuing() && ClientTypes.APPLICATION.equals(s.clientType());
    }

    /**
     * Whether the shared subscription is read from its backlog topic in Kafka: one of its members is
     * a persistent APPLICATION session. Its members then take the messages from there, as members of
     * the topic's consumer group, whether or not they are connected now.
     */
    private boolean applicationGroup(List<Subscription> members) {
        for (Subscription s : members) {
            if (application(s.clientId())) {
                return true;
            }
        }
        return false;
    }

    private void toSharedApplication(SharedGroupKey group, Downlink d, byte[][] encoded) {
        // Keyed by topic: one topic's messages stay in one partition, so in order [MQTT-4.6.0-5].
        write(topics.appShared(group.group(), group.topicFilter()), null, d.message().topic(), d, encoded,
                "shared subscription $share/" + group.group() + "/" + group.topicFilter());
    }

    private boolean persistentDevice(String clientId) {
        SessionState s = directory.get(clientId).orElse(null);
        return s != null && s.queuing() && ClientTypes.DEVICE.equals(s.clientType());
    }

    private void toApplication(String clientId, Downlink d, byte[][] encoded) {
        write(topics.app(clientId), 0, clientId, d, encoded, "the backlog of " + clientId);
    }

    private void toDeviceQueue(String clientId, Downlink d, byte[][] encoded) {
        write(topics.devicePersisted(), null, clientId, d, encoded, "the DEVICE queue of " + clientId);
    }

    /**
     * Writes {@code d}, split into parts where it is too large for one record. A part Kafka can never
     * take goes to the dead-letter topic (at the next {@link #flushed()}); any other failure makes the
     * batch be routed again.
     */
    private void write(String topic, Integer partition, String key, Downlink d, byte[][] encoded, String what) {
        if (encoded[0] == null) {
            encoded[0] = MessageCodec.encode(d.message());
        }
        // Once a write to a target failed in this batch, later ones to it wait for the batch to be
        // routed again: a later message stored before an earlier one would make the earlier one look
        // like a repeat to the readers that skip repeats (DEVICE queues, APPLICATION backlogs).
        String target = topic + "/" + (partition != null ? partition : key);
        if (failedTargets.contains(target)) {
            downlinkFailed.set(true);
            return;
        }
        for (Downlink part : ClusterCodec.split(d, encoded[0].length, maxRecordValueBytes)) {
            byte[] value = ClusterCodec.encode(part, encoded[0]);
            inFlight.add(producer.send(topic, partition, key, value, null).whenComplete((m, e) -> {
                if (e == null) {
                    return;
                }
                failedTargets.add(target);
                if (DeadLetters.permanent(e)) {
                    toDeadLetters.add(() -> deadLetters.send("message for " + what + " not storable: " + e.getMessage(),
                            topics.publish(), d.sourcePartition(), d.sourceOffset(), topic, key, value));
                } else if (!downlinkFailed.getAndSet(true)) {
                    log.warn("Message for {} not stored; the batch is routed again: {}", what, e.toString());
                }
            }));
        }
    }

    /** A message another node routed to the sessions here. */
    public void downlink(Downlink d) {
        if (gate.admit(d.sourcePartition(), d.sourceOffset(), d.part())) {
            deliverHere(d.message(), d.matched());
        }
    }

    /** Whether every hand-off to another node since the last call is stored; false means route again. */
    public boolean flushed() {
        if (!membership.serving()) {
            // A fenced node commits nothing (and must not wait on a Kafka it may not reach): the
            // partition's next owner routes the batch again.
            downlinkFailed.set(false);
            failedTargets.clear();
            inFlight.clear();
            return false;
        }
        // Each completes (stored or failed) within the producer's delivery timeout, after its callback ran.
        for (CompletableFuture<?> f : inFlight) {
            try {
                f.join();
            } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
                // Its callback judged it: routed again, or (never storable) a dead letter.
            }
        }
        inFlight.clear();
        failedTargets.clear();
        boolean stored = !downlinkFailed.getAndSet(false);
        for (Runnable r; (r = toDeadLetters.poll()) != null; ) {
            r.run();
        }
        boolean deadLettersStored = deadLetters.flushed();
        return stored && deadLettersStored;
    }

    /** The downlink partition for messages of {@code publish} partition {@code partition} on {@code node}. */
    public int downlinkPartition(String node, int partition) {
        return partition % producer.partitions(topics.downlink(node));
    }

    private void send(String node, Downlink d, byte[][] encoded) {
        write(topics.downlink(node), downlinkPartition(node, d.sourcePartition()), null, d, encoded,
                "node " + node);
    }

    /**
     * Overlapping plain subscriptions of one client get one copy between them [MQTT-3.3.4-2]; a
     * shared subscription gets its own copy, also when the same client has a plain one (4.8.2).
     */
    private void deliverHere(BrokerMessage message, List<Subscription> matched) {
        List<Subscription> plain = new ArrayList<>(matched.size());
        for (Subscription s : matched) {
            if (s.isShared()) {
                deliverTo(s.clientId(), message, List.of(s));
            } else {
                plain.add(s);
            }
        }
        for (Map.Entry<String, List<Subscription>> e : Matches.byClient(plain).entrySet()) {
            deliverTo(e.getKey(), message, e.getValue());
        }
    }

    private void deliverTo(String clientId, BrokerMessage message, List<Subscription> matched) {
        SessionActor actor = sessions.get(clientId);
        if (actor == null) {
            drops.count(MessageDrops.Reason.NO_SESSION, clientId, message.topic());
        } else {
            actor.deliver(message, matched);
        }
    }

    private String nodeOf(Subscription s) {
        return s.nodeId() == null ? nodeId : s.nodeId();
    }

    /**
     * One member of a shared group: among those connected, else among those that can keep it for
     * later (a persistent DEVICE member's queue in Redis, or a session on a live node), picked by the
     * message's position so any node picks the same.
     */
    private Subscription choose(List<Subscription> members, int partition, long offset) {
        List<Subscription> online = new ArrayList<>(members.size());
        List<Subscription> reachable = new ArrayList<>(members.size());
        for (Subscription s : members) {
            String node = nodeOf(s);
            if (!membership.isAlive(node)) {
                if (persistentDevice(s.clientId())) {
                    reachable.add(s); // its queue in Redis takes it whatever node it was on
                }
                continue;
            }
            reachable.add(s);
            if (isOnline(s, node)) {
                online.add(s);
            }
        }
        List<Subscription> candidates = online.isEmpty() ? reachable : online;
        if (candidates.isEmpty()) {
            return null;
        }
        candidates.sort(Comparator.comparing(Subscription::clientId));
        long mix = offset * 31 + partition;
        return candidates.get((int) Math.floorMod(mix, (long) candidates.size()));
    }

    private boolean isOnline(Subscription s, String node) {
        if (node.equals(nodeId)) {
            SessionActor actor = sessions.get(s.clientId());
            return actor != null && actor.isOnline();
        }
        return directory.get(s.clientId()).map(SessionState::connected).orElse(false);
    }
}
