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
import io.fleetmq.session.DeliveryBackpressure;
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
     * Messages of the batch being routed that go to APPLICATION backlogs (routing thread only): once
     * their writes are stored they reach their backlog, an arrival for {@link #backpressure}.
     */
    private final List<BrokerMessage> backlogged = new ArrayList<>();
    private final DeliveryBackpressure backpressure;
    /** Messages routed to nobody: each message is routed by one node, so the cluster's sum counts each once. */
    private final io.micrometer.core.instrument.Counter unmatched;

    /**
     * @param maxRecordValueBytes the most a record value may hold (see {@code RecordLimits}): larger
     *                            downlink records are split
     */
    public ClusterRouter(String nodeId, SubscriptionTrie subscriptions, SessionRegistry sessions,
            SessionDirectory directory, Membership membership, ClusterProducer producer, BrokerTopics topics,
            DeliveryGate gate, MessageDrops drops, DeadLetters deadLetters, int maxRecordValueBytes,
            io.micrometer.core.instrument.MeterRegistry meters, DeliveryBackpressure backpressure) {
        this.backpressure = backpressure;
        this.unmatched = io.micrometer.core.instrument.Counter.builder("fleetmq.publish.unmatched")
                .description("PUBLISH messages that matched no subscription when they were routed: delivered to"
                        + " nobody (a retained one is still kept as retained)")
                .register(meters);
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

    /**
     * Where one message goes, worked out once from its matches by {@link #plan}: what
     * {@link #route} carries out and {@link #routeHere} checks it can carry out on its own.
     */
    private static final class Plan {
        /** Sessions of this node that take the message from their actor: one entry per copy. */
        final List<Map.Entry<String, List<Subscription>>> here = new ArrayList<>(2);
        /** Subscriptions of sessions on other nodes, by node; null while there are none. */
        Map<String, List<Subscription>> otherNodes;
        /** Writes to a DEVICE queue or an APPLICATION backlog, which this node then carries out; null while none. */
        List<Runnable> writes;
        /** Shared groups without a member that can take the message. */
        int unserved;
        /** Whether a write goes to an APPLICATION backlog. */
        boolean backlogged;
        /** The message's encoding, made by the first write and shared by all its records. */
        final byte[][] encoded = new byte[1][];

        boolean onlyHere() {
            return otherNodes == null && writes == null && unserved == 0;
        }

        void write(Runnable w) {
            if (writes == null) {
                writes = new ArrayList<>(2);
            }
            writes.add(w);
        }

        /** A write into an APPLICATION backlog: its storage is the message's arrival there. */
        void backlogWrite(Runnable w) {
            write(w);
            backlogged = true;
        }

        void toNode(String node, Subscription s) {
            if (otherNodes == null) {
                otherNodes = new HashMap<>(4);
            }
            otherNodes.computeIfAbsent(node, n -> new ArrayList<>()).add(s);
        }
    }

    /**
     * Classifies every match of {@code message}: a persistent APPLICATION session or shared group gets
     * it through its backlog topic, a persistent DEVICE session through its queue, any other session
     * from its actor here or through its node's downlink. Carries nothing out: the writes are planned,
     * not sent.
     *
     * @param hereOnly stop, and answer null, after the first match that is not a session of this node taking
     *                 the message from its actor: {@link #routeHere} then leaves the message to the
     *                 routing consumer, and must not plan a large fan-out on the producer's thread
     */
    private Plan plan(BrokerMessage message, Matches matches, int partition, long offset, boolean hereOnly) {
        Plan plan = new Plan();
        byte[][] encoded = plan.encoded;
        for (Map.Entry<String, List<Subscription>> client : Matches.byClient(matches.direct()).entrySet()) {
            if (hereOnly && !plan.onlyHere()) {
                return null;
            }
            String clientId = client.getKey();
            List<Subscription> subs = client.getValue();
            if (application(clientId)) {
                plan.backlogWrite(() -> toApplication(clientId, new Downlink(partition, offset, message, subs),
                        encoded));
            } else if (queuedForDevice(clientId, message, subs)) {
                plan.write(() -> toDeviceQueue(clientId, new Downlink(partition, offset, message, subs), encoded));
            } else if (allHere(subs)) {
                plan.here.add(client);
            } else {
                // Its subscriptions name more than one node while its session moves: each gets its own.
                List<Subscription> here = new ArrayList<>(subs.size());
                for (Subscription s : subs) {
                    if (nodeOf(s).equals(nodeId)) {
                        here.add(s);
                    } else {
                        plan.toNode(nodeOf(s), s);
                    }
                }
                if (!here.isEmpty()) {
                    plan.here.add(Map.entry(clientId, here));
                }
            }
        }
        for (Map.Entry<SharedGroupKey, List<Subscription>> group : matches.shared().entrySet()) {
            if (hereOnly && !plan.onlyHere()) {
                return null;
            }
            if (applicationGroup(group.getValue())) {
                // The reading member delivers with its own subscription, so the record carries one
                // member, not the whole group: a group of thousands must not make it too large.
                List<Subscription> reader = List.of(group.getValue().get(0));
                plan.backlogWrite(() -> toSharedApplication(group.getKey(),
                        new Downlink(partition, offset, message, reader), encoded));
                continue;
            }
            Subscription member = choose(group.getValue(), partition, offset);
            if (member == null) {
                plan.unserved++;
                continue;
            }
            List<Subscription> one = List.of(member);
            if (application(member.clientId())) {
                plan.backlogWrite(() -> toApplication(member.clientId(), new Downlink(partition, offset, message, one),
                        encoded));
            } else if (queuedForDevice(member.clientId(), message, one)) {
                plan.write(() -> toDeviceQueue(member.clientId(), new Downlink(partition, offset, message, one), encoded));
            } else if (nodeOf(member).equals(nodeId)) {
                // A shared subscription gets its own copy, also when the client has a plain one (4.8.2).
                plan.here.add(Map.entry(member.clientId(), one));
            } else {
                plan.toNode(nodeOf(member), member);
            }
        }
        return plan;
    }

    private boolean allHere(List<Subscription> subs) {
        for (Subscription s : subs) {
            if (!nodeOf(s).equals(nodeId)) {
                return false;
            }
        }
        return true;
    }

    /** Routes the message stored at {@code offset} of {@code publish} partition {@code partition}. */
    public void route(BrokerMessage message, int partition, long offset) {
        Matches matches = subscriptions.match(message.topic());
        if (matches.isEmpty()) {
            unmatched.increment();
            return;
        }
        Plan plan = plan(message, matches, partition, offset, false);
        if (plan.writes != null) {
            plan.writes.forEach(Runnable::run);
            if (plan.backlogged) {
                backlogged.add(message);
            }
        }
        for (int i = 0; i < plan.unserved; i++) {
            drops.count(MessageDrops.Reason.NO_SESSION, null, message.topic());
        }
        if (!plan.here.isEmpty() && gate.admit(partition, offset)) {
            deliverCopies(message, plan.here);
        }
        if (plan.otherNodes == null) {
            return;
        }
        for (Map.Entry<String, List<Subscription>> e : plan.otherNodes.entrySet()) {
            String node = e.getKey();
            if (membership.isAlive(node)) {
                send(node, new Downlink(partition, offset, message, e.getValue()), plan.encoded);
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
            unmatched.increment();
            return true;
        }
        Plan plan = plan(message, matches, partition, offset, true);
        if (plan == null || !plan.onlyHere()) {
            return false;
        }
        if (gate.admit(partition, offset)) {
            deliverCopies(message, plan.here);
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
            backlogged.clear();
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
        if (stored) {
            backpressure.storedInBacklogs(backlogged);
        }
        backlogged.clear(); // routed again if not stored, and counted then
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
        List<Map.Entry<String, List<Subscription>>> copies = new ArrayList<>(matched.size());
        List<Subscription> plain = new ArrayList<>(matched.size());
        for (Subscription s : matched) {
            if (s.isShared()) {
                copies.add(Map.entry(s.clientId(), List.of(s)));
            } else {
                plain.add(s);
            }
        }
        copies.addAll(Matches.byClient(plain).entrySet());
        deliverCopies(message, copies);
    }

    /** Each entry is one copy for one session of this node, with the subscriptions it matched. */
    private void deliverCopies(BrokerMessage message, List<Map.Entry<String, List<Subscription>>> copies) {
        for (Map.Entry<String, List<Subscription>> copy : copies) {
            deliverTo(copy.getKey(), message, copy.getValue());
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
