package io.fleetmq.session.cluster;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.NodeStatus;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.core.log.ClientText;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.kafka.cluster.StateFollower;
import io.fleetmq.kafka.publish.PublishLog;
import io.fleetmq.session.MessageDrops;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connect sequence (DESIGN.md, "Kafka topics", {@code session.events}): for the partitions of
 * {@code session.events} this node owns, it decides every CONNECT and DISCONNECT in the order they
 * were written, so two connections racing for one client ID on two nodes end the same way on any
 * number of nodes: the later one wins and the earlier gets 0x8E.
 *
 * <p>It is the only writer of a client ID's record in {@code sessions}. It also acts for nodes that
 * died: their connected sessions become offline sessions, their wills are published (once, by the
 * owner of the client ID's partition) and their offline sessions expire on time.
 *
 * <p>Runs on the {@code session.events} consumer thread; other threads hand it work through
 * {@link #submit}.
 */
public final class ConnectSequencer {

    private static final Logger log = LoggerFactory.getLogger(ConnectSequencer.class);

    private final String nodeId;
    private final BrokerTopics topics;
    private final ClusterProducer producer;
    private final Membership membership;
    private final SessionDirectory directory;
    private final StateFollower sessionsFollower;
    private final PublishLog publishLog;
    private final MessageDrops drops;
    private final SessionTimers timers;
    private final LongSupplier clock;
    private final int partitions;
    private final Duration catchUpTimeout;
    private final io.fleetmq.persistence.redis.DeviceQueues deviceQueues;
    private io.fleetmq.kafka.app.AppTopics appTopics;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ScheduledExecutorService scheduler;
    /** CONNECTs waiting for a live node to let go of their client ID's connection, by client ID. */
    private final Map<String, Parked> parked = new HashMap<>();
    /** {@code fleetmq_connect_takeovers_total} by outcome; empty until {@link #meters} is called. */
    private final Map<TakeOverEnd, Counter> takeOvers = new EnumMap<>(TakeOverEnd.class);
    /** CONNECTs of node incarnations gone before they were decided; null until {@link #meters}. */
    private Counter staleConnects;
    private final io.fleetmq.core.log.LogLimit staleLog = new io.fleetmq.core.log.LogLimit(5, Duration.ofSeconds(10));

    /** How a takeover that waited for the node holding the connection came to be decided. */
    enum TakeOverEnd {
        /** the node said it let the connection go (or held none) */
        RELEASED,
        /** no word within {@link #RELEASE_WAIT} */
        TIMED_OUT,
        /** the node died; its sessions were settled here */
        NODE_GONE,
        /** this node gave the client ID's partition up */
        PARTITION_MOVED,
        /** this node is stopping: no timer could be set */
        STOPPING
    }
    /** Writes of the current batch; the batch's offsets are committed only once they are stored. */
    private final List<CompletableFuture<?>> inFlight = new ArrayList<>();
    private volatile Set<Integer> owned = Set.of();
    /** Where this node's own answers and commands go instead of its node topic; null: through Kafka. */
    private java.util.function.Consumer<NodeCommand> here;
    /** This node's answers and commands of the current batch, handed over once its writes are done. */
    private final List<NodeCommand> forHere = new ArrayList<>();
    /** The offset of the event being decided, {@link SessionState#UNKNOWN} outside {@link #handle}. */
    private long deciding = SessionState.UNKNOWN;

    /**
     * Header of a {@code sessions} record (a tombstone too): the offset of the {@code session.events}
     * record whose decision it stores. A header, so that nodes which do not know it read the value as before.
     */
    public static final String DECIDED_AT_HEADER = "fleetmq-decided-at";

    /**
     * Longest wait for a node told to give up a connection ({@link NodeCommand.TakeOver}) to say it
     * has ({@link SessionEvent.Released}); then the CONNECT is decided as if it had. Well below
     * {@code cluster.connect-timeout}, so the client still gets its CONNACK.
     */
    static final Duration RELEASE_WAIT = Duration.ofSeconds(2);
    private Duration releaseWait = RELEASE_WAIT;

    /**
     * CONNECTs of one client ID waiting, in the order written, for {@code node} to release the
     * connection the first of them takes over; {@code offsets} are their {@code session.events} offsets.
     */
    private static final class Parked {
        final String node;
        final long epoch;
        final List<SessionEvent.Connect> waiting = new ArrayList<>();
        final List<Long> offsets = new ArrayList<>();
        ScheduledFuture<?> timeout;

        Parked(String node, long epoch) {
            this.node = node;
            this.epoch = epoch;
        }

        void add(SessionEvent.Connect c, long offset) {
            if (waiting.stream().noneMatch(w -> w.requestId().equals(c.requestId()))) {
                waiting.add(c); // the same CONNECT read again waits once
                offsets.add(offset);
            }
        }
    }

    /** The deciding event's offset a {@code sessions} record carries, {@link SessionState#UNKNOWN} if none. */
    public static long decidedAt(Headers headers) {
        Header h = headers.lastHeader(DECIDED_AT_HEADER);
        if (h == null || h.value() == null || h.value().length != Long.BYTES) {
            return SessionState.UNKNOWN;
        }
        return ByteBuffer.wrap(h.value()).getLong();
    }

    public ConnectSequencer(String nodeId, BrokerTopics topics, ClusterProducer producer, Membership membership,
            SessionDirectory directory, StateFollower sessionsFollower, PublishLog publishLog, MessageDrops drops,
            ScheduledExecutorService timers, LongSupplier clock, int partitions, Duration catchUpTimeout,
            io.fleetmq.persistence.redis.DeviceQueues deviceQueues) {
        this.deviceQueues = deviceQueues;
        this.nodeId = nodeId;
        this.topics = topics;
        this.producer = producer;
        this.membership = membership;
        this.directory = directory;
        this.sessionsFollower = sessionsFollower;
        this.publishLog = publishLog;
        this.drops = drops;
        this.timers = new SessionTimers(SessionTimers.on(timers), this::submit);
        this.scheduler = timers;
        this.clock = clock;
        this.partitions = partitions;
        this.catchUpTimeout = catchUpTimeout;
    }

    /** Where persistent APPLICATION sessions get their backlog topics; null: none are made. */
    public void appTopics(io.fleetmq.kafka.app.AppTopics topics) {
        this.appTopics = topics;
    }

    /**
     * Answers and commands for this node's own sessions go to {@code localCommands} once the writes
     * decided with them are done, instead of a round trip through its node topic and inbox: in a
     * standalone node that is every CONNECT, in a cluster of n nodes one in n.
     */
    public void localCommands(java.util.function.Consumer<NodeCommand> localCommands) {
        this.here = localCommands;
    }

    /** Counts the takeovers that waited for their old node, by how each was decided. */
    public void meters(MeterRegistry meters) {
        for (TakeOverEnd end : TakeOverEnd.values()) {
            takeOvers.put(end, Counter.builder("fleetmq.connect.takeovers")
                    .description("CONNECTs that took a session from a connection on another live node, by how the"
                            + " wait for that node to let it go ended")
                    .tag("outcome", end.name().toLowerCase(java.util.Locale.ROOT)).register(meters));
        }
        staleConnects = Counter.builder("fleetmq.connect.stale")
                .description("CONNECTs not decided because the node incarnation that took them was gone by then"
                        + " (it stopped, fenced itself or died); their clients connect again elsewhere")
                .register(meters);
    }

    /** For tests: how long a takeover waits for the old node's word, {@link #RELEASE_WAIT} unless set. */
    void releaseWait(Duration wait) {
        this.releaseWait = wait;
    }

    /** Runs {@code task} on the sequencer's thread, between events. */
    public void submit(Runnable task) {
        tasks.add(task);
    }

    /** A node died or left: from now on its sessions are this sequence's to settle. */
    public void nodeDied(NodeStatus node) {
        submit(() -> {
            if (membership.serving()) {
                settleSessionsOf(node.nodeId(), owned);
                // Their connections are settled: nothing more will come from that node about them.
                parked.entrySet().stream().filter(e -> e.getValue().node.equals(node.nodeId()))
                        .map(Map.Entry::getKey).toList().forEach(id -> unpark(id, TakeOverEnd.NODE_GONE));
            }
        });
    }

    // ------------------------------------------------------------------ consumer hooks

    /** Between polls: what other threads handed over. */
    public void idle() {
        if (!membership.serving()) {
            // Fenced: timers and settlements decided from this node's stale view must not act (a
            // session "expired" here may live on elsewhere); the next owner of the partitions decides.
            tasks.clear();
            parked.values().forEach(p -> p.timeout.cancel(false));
            parked.clear();
            forHere.clear();
            return;
        }
        Runnable task;
        while ((task = tasks.poll()) != null) {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.error("Connect sequence task failed", e);
            }
        }
        if (!forHere.isEmpty()) {
            // A takeover decided by a timer or a node's death: no batch follows to hand its answer over.
            writesDone();
            handOverHere();
        }
    }

    /** The partitions this node sequences changed. */
    public void ownership(Set<Integer> now) {
        Set<Integer> added = new HashSet<>(now);
        added.removeAll(owned);
        Set<Integer> removed = new HashSet<>(owned);
        removed.removeAll(now);
        owned = now;
        if (!removed.isEmpty()) {
            // Their new owner times these sessions now.
            timers.cancelIf(clientId -> removed.contains(partitionOf(clientId)));
            // Their offsets are committed: decided here or never. Stored before the new owner reads them.
            List<String> leaving = parked.keySet().stream().filter(id -> removed.contains(partitionOf(id))).toList();
            if (!leaving.isEmpty() && membership.serving()) {
                leaving.forEach(id -> unpark(id, TakeOverEnd.PARTITION_MOVED));
                if (!flushed()) {
                    log.warn("Decisions of CONNECTs in partitions {} not all stored before giving them up", removed);
                }
            }
        }
        if (added.isEmpty()) {
            return;
        }
        // The previous owner's decisions must be known here before this node decides anything
        // for these client IDs; it stored them before giving the partitions up.
        if (!sessionsFollower.awaitCaughtUp(catchUpTimeout)) {
            log.warn("Sessions not caught up within {} after taking over session partitions {}", catchUpTimeout, added);
        }
        for (String dead : deadNodesWithSessions()) {
            settleSessionsOf(dead, added);
        }
        scheduleOfflineExpiries(added);
    }

    /** Before committing offsets: everything decided so far is stored. */
    public boolean flushed() {
        if (!membership.serving()) {
            inFlight.clear();
            forHere.clear(); // a fenced node's sessions are refused or closed; the next owner decides
            return false; // a fenced node commits nothing: what it skipped is decided by the next owner
        }
        boolean ok = writesDone();
        inFlight.clear();
        handOverHere();
        return ok;
    }

    /**
     * Waits for this sequence's own writes; whether all were stored. The producer is shared with the
     * routing and the DEVICE queue notices, and a flush of it would hold every CONNECT's answer behind
     * their traffic (and behind any record of theirs that waits for a partition leader).
     */
    private boolean writesDone() {
        boolean ok = true;
        for (CompletableFuture<?> f : inFlight) {
            try {
                f.get(catchUpTimeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                ok = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ok = false;
            }
        }
        return ok;
    }

    /**
     * This node's answers and commands, in the order decided, once the writes before them are done:
     * a CONNECT is answered after its session's state is stored, as its answer through Kafka came
     * after its own record was. A write that failed leaves its batch to be read again, which decides
     * from what is stored and answers with the same epoch, and a session takes a repeated answer as
     * the one it has; so the answers go even then, as they would through Kafka, where an answer's
     * record does not wait for the state's.
     */
    private void handOverHere() {
        for (NodeCommand c : forHere) {
            try {
                here.accept(c);
            } catch (RuntimeException e) {
                log.error("Handing {} of {} to this node's session failed", c.getClass().getSimpleName(),
                        ClientText.of(c.clientId()), e);
            }
        }
        forHere.clear();
    }

    // ------------------------------------------------------------------ events

    public void handle(SessionEvent event, int partition, long offset) {
        if (!membership.serving()) {
            return; // fenced: the next owner decides it; flushed() makes this batch be read again
        }
        // A batch read again (after a write failed, or by a partition's new owner before its previous
        // owner committed) is decided once: an event at or before the last one stored for its client ID
        // was decided then, and deciding it again against the later state would be wrong (an older
        // CONNECT of the batch would take the session from the newer connection).
        long decided = directory.decidedAt(event.clientId());
        if (decided != SessionState.UNKNOWN && offset <= decided) {
            if (event instanceof SessionEvent.Connect c && offset == decided) {
                answerAgain(c, directory.get(c.clientId()).orElse(null));
            }
            return;
        }
        deciding = offset;
        try {
            decide(event);
        } finally {
            deciding = SessionState.UNKNOWN;
        }
    }

    private void decide(SessionEvent event) {
        if (event instanceof SessionEvent.Connect c) {
            Parked p = parked.get(c.clientId());
            if (p != null) {
                p.add(c, deciding); // decided after the CONNECTs before it
            } else {
                onConnect(c, false);
            }
        } else if (event instanceof SessionEvent.Released r) {
            Parked p = parked.get(r.clientId());
            if (p != null && p.epoch == r.epoch()) {
                unpark(r.clientId(), TakeOverEnd.RELEASED);
            }
        } else if (event instanceof SessionEvent.Disconnected d) {
            onDisconnected(d);
        } else if (event instanceof SessionEvent.WillPublished w) {
            current(w.clientId(), w.epoch()).filter(s -> !s.connected())
                    .ifPresent(s -> write(s.disconnected(s.disconnectedAtMillis(), s.sessionExpirySeconds(), null)));
        } else if (event instanceof SessionEvent.Expired e) {
            // A connected session ends only this way when its node is gone (an operator ended it).
            current(e.clientId(), e.epoch()).filter(s -> !s.connected() || !membership.isAlive(s.nodeId(),
                    s.nodeIncarnation())).ifPresent(this::expired);
        }
    }

    /**
     * The CONNECTs of {@code clientId} that waited for a node to release its connection are decided
     * now, in order, each as of its own event (a later one may wait again, for the node of the first).
     */
    private void unpark(String clientId, TakeOverEnd end) {
        Parked p = parked.remove(clientId);
        if (p == null) {
            return;
        }
        p.timeout.cancel(false);
        counted(end);
        long was = deciding;
        try {
            for (int i = 0; i < p.waiting.size(); i++) {
                deciding = p.offsets.get(i);
                Parked again = parked.get(clientId);
                if (again != null) {
                    again.add(p.waiting.get(i), deciding);
                } else {
                    onConnect(p.waiting.get(i), i == 0);
                }
            }
        } finally {
            deciding = was;
        }
    }

    /** @param released whether the node that held the session's connection has let it go already */
    private void onConnect(SessionEvent.Connect c, boolean released) {
        long now = clock.getAsLong();
        SessionState cur = directory.get(c.clientId()).orElse(null);
        if (cur != null && cur.requestId().equals(c.requestId())) {
            answerAgain(c, cur); // decided before, in a record that does not say by which event
            return;
        }
        if (membership.isGone(c.nodeId(), c.nodeIncarnation())) {
            // Its node stopped, fenced itself or died before the CONNECT was decided: the connection is
            // gone with it (refused with 0x88 or closed), and its session must stay as it is. Accepted,
            // it would sit "connected" on a node nobody settles any more.
            if (staleConnects != null) {
                staleConnects.increment();
            }
            if (staleLog.allow()) {
                log.info("CONNECT of {} to node {} (incarnation {}) not decided: that incarnation is gone{}",
                        ClientText.of(c.clientId()), c.nodeId(), c.nodeIncarnation(), staleLog.suppressedNote());
            }
            return;
        }
        SessionState ending = cur; // an expired one too: its store goes now
        if (cur != null && !cur.connected() && cur.expiresAtMillis() <= now) {
            cur = null; // expired; its timer has not caught up yet
        }
        long epoch = cur == null ? 1 : cur.epoch() + 1;
        boolean present = cur != null && !c.cleanStart();
        if (cur != null) {
            boolean sameNode = cur.nodeId().equals(c.nodeId()) && cur.nodeIncarnation() == c.nodeIncarnation();
            if (!sameNode) {
                // The session leaves its node: that node disconnects the old connection (0x8E) and
                // lets the session go. Its will is settled here, once, whether that node lives or not.
                if (!released && membership.isAlive(cur.nodeId(), cur.nodeIncarnation())) {
                    command(cur.nodeId(), new NodeCommand.TakeOver(c.clientId(), epoch));
                    if (cur.connected()) {
                        // A DISCONNECT that node read before this CONNECT was written may not be in the
                        // sequence yet: the answer (session present, the will) waits for its word.
                        park(c, cur.nodeId(), epoch);
                        return;
                    }
                }
                SessionState.PendingWill will = cur.will();
                // [MQTT-3.1.3-9] a reconnect to the session in time cancels a delayed will; otherwise
                // the will of the ended connection (or session) is due now.
                boolean cancelled = !c.cleanStart() && will != null && (will.delaySeconds() > 0 || !cur.connected());
                // A connection whose node stopped or fenced itself was closed by the server: no will.
                if (will != null && !cancelled && !membership.hasLeft(cur.nodeId(), cur.nodeIncarnation())) {
                    publishWill(cur.clientId(), will.message());
                }
            }
        }
        // A persistent APPLICATION session's backlog topic was created by the connecting node before it
        // asked (SessionActor), so this thread never waits for Kafka's controller.
        if (appTopics != null && cur != null && !present && ClientTypes.APPLICATION.equals(cur.clientType())
                && !(c.sessionExpirySeconds() > 0 && ClientTypes.APPLICATION.equals(c.clientType()))) {
            appTopics.delete(c.clientId()); // a clean start ends the old session and its backlog
        }
        timers.cancel(c.clientId()); // the connection supersedes the offline session's will and expiry
        // A session resumed with expiry 0 keeps its store (and what waits in it) until it ends.
        boolean queuing = c.sessionExpirySeconds() > 0 || present && cur.queuing();
        write(new SessionState(c.clientId(), c.nodeId(), c.nodeIncarnation(), epoch, true, c.sessionExpirySeconds(), 0,
                c.will(), c.requestId(), c.clientType(), queuing, c.client()));
        command(c.nodeId(), NodeCommand.ConnectAccepted.decided(c.requestId(), c.clientId(), epoch, ending, present,
                queuing));
    }

    private void counted(TakeOverEnd end) {
        Counter c = takeOvers.get(end);
        if (c != null) {
            c.increment();
        }
    }

    /** Parks {@code c}, the CONNECT being decided (its offset is {@link #deciding}). */
    private void park(SessionEvent.Connect c, String node, long epoch) {
        Parked p = new Parked(node, epoch);
        p.add(c, deciding);
        parked.put(c.clientId(), p);
        try {
            p.timeout = scheduler.schedule(() -> submit(() -> {
                if (parked.get(c.clientId()) == p) {
                    log.info("Node {} did not release the connection of {} within {}; deciding its takeover",
                            node, ClientText.of(c.clientId()), releaseWait);
                    unpark(c.clientId(), TakeOverEnd.TIMED_OUT);
                }
            }), releaseWait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            parked.remove(c.clientId()); // this node stops: decided without the wait, as before it existed
            counted(TakeOverEnd.STOPPING);
            onConnect(c, true);
        }
    }

    /**
     * A CONNECT decided before, in a batch read again: the answer may be the write that failed, so it
     * goes out again; the session takes a repeated answer for its connection as the same one. A
     * session's epochs start at 1, so a later epoch means it was resumed.
     */
    private void answerAgain(SessionEvent.Connect c, SessionState cur) {
        if (cur != null && cur.requestId().equals(c.requestId()) && cur.connected()
                && cur.nodeId().equals(c.nodeId()) && cur.nodeIncarnation() == c.nodeIncarnation()) {
            // The session before this CONNECT is not known any more: a new session clears the store
            // in case one persisted, and a resumed one keeps it in case it is its own.
            boolean present = !c.cleanStart() && cur.epoch() > 1;
            command(c.nodeId(), new NodeCommand.ConnectAccepted(c.requestId(), c.clientId(), cur.epoch(), present,
                    cur.queuing(), !present));
        }
    }

    private void onDisconnected(SessionEvent.Disconnected d) {
        Optional<SessionState> cur = current(d.clientId(), d.epoch()).filter(SessionState::connected);
        if (cur.isEmpty()) {
            return; // an older connection; the session has moved on
        }
        boolean undone = d.sessionExpirySeconds() == SessionEvent.Disconnected.KEEP_EXPIRY;
        long expiry = undone ? cur.get().sessionExpirySeconds() : d.sessionExpirySeconds();
        if (expiry == 0) {
            delete(d.clientId());
            if (undone) {
                // No node holds the session to drop what it had (subscriptions kept from an earlier
                // connection it resumed, a DEVICE queue): they end here, as an orphan's do.
                deleteSubscriptions(d.clientId(), d.epoch());
            }
        } else {
            SessionState offline = cur.get().disconnected(d.atMillis(), expiry, d.will());
            write(offline);
            scheduleExpiry(offline);
        }
    }

    /**
     * An offline session's end, told by the node holding it (which published its will and dropped
     * its subscriptions and DEVICE queue), or by an operator for a session whose node is gone
     * (connected there or not): then this sequence does what the node would have, as when such a
     * session's expiry is due here.
     */
    private void expired(SessionState s) {
        boolean orphan = !membership.isAlive(s.nodeId(), s.nodeIncarnation());
        // As when such a session is settled: a node that left on purpose closed its clients without wills.
        boolean closedByServer = s.connected() && membership.hasLeft(s.nodeId(), s.nodeIncarnation());
        if (orphan && s.will() != null && !closedByServer) {
            publishWill(s.clientId(), s.will().message()); // the session ends first [MQTT-3.1.3-9]
        }
        delete(s.clientId());
        if (orphan) {
            deleteSubscriptions(s.clientId(), s.epoch());
        }
    }

    private Optional<SessionState> current(String clientId, long epoch) {
        return directory.get(clientId).filter(s -> s.epoch() == epoch);
    }

    // ------------------------------------------------------------------ dead nodes

    private Set<String> deadNodesWithSessions() {
        Set<String> dead = new HashSet<>();
        directory.all().forEach(s -> {
            if (!membership.isAlive(s.nodeId(), s.nodeIncarnation())) {
                dead.add(s.nodeId());
            }
        });
        return dead;
    }

    /**
     * The sessions that {@code deadNode} held, in {@code partitions}: connected ones lose their
     * connection now, as if the network had dropped it; their will is published, or waits for its delay.
     */
    private void settleSessionsOf(String deadNode, Set<Integer> inPartitions) {
        long now = clock.getAsLong();
        List<SessionState> held = directory.all()
                .filter(s -> s.nodeId().equals(deadNode) && !membership.isAlive(s.nodeId(), s.nodeIncarnation()))
                .filter(s -> inPartitions.contains(partitionOf(s.clientId())))
                .toList();
        int settled = 0;
        for (SessionState s : held) {
            if (!s.connected()) {
                scheduleExpiry(s);
                continue;
            }
            settled++;
            // A node that left on purpose (or fenced itself and said so on its return) told its
            // clients to go (0x8B, 0x9C), and a server shutdown does not publish wills
            // [MQTT-3.14.2]; only a node that died takes its clients' connections down hard.
            boolean left = membership.hasLeft(s.nodeId(), s.nodeIncarnation());
            SessionState.PendingWill will = left ? null : s.will();
            SessionState.PendingWill waiting = null;
            if (will != null) {
                long delay = Math.min(will.delaySeconds(), s.sessionExpirySeconds());
                if (delay <= 0) {
                    publishWill(s.clientId(), will.message());
                } else {
                    waiting = will;
                }
            }
            if (s.sessionExpirySeconds() == 0) {
                delete(s.clientId());
                deleteSubscriptions(s.clientId(), s.epoch());
            } else {
                SessionState offline = s.disconnected(now, s.sessionExpirySeconds(), waiting);
                write(offline);
                scheduleExpiry(offline);
            }
        }
        if (settled > 0) {
            log.info("Settled {} sessions of node {} (gone)", settled, deadNode);
        }
    }

    private void scheduleOfflineExpiries(Set<Integer> inPartitions) {
        directory.all().filter(s -> !s.connected() && inPartitions.contains(partitionOf(s.clientId())))
                .forEach(this::scheduleExpiry);
    }

    /**
     * Times the delayed will and the end of an offline session, for sessions no live node looks
     * after; when due, the state decides again (the client may have come back). One timer per
     * (client ID, epoch, kind): scheduling again on a rebalance or a second settlement keeps it.
     */
    private void scheduleExpiry(SessionState s) {
        long now = clock.getAsLong();
        if (s.will() != null) {
            long due = s.disconnectedAtMillis() + Math.min(s.will().delaySeconds(), s.sessionExpirySeconds()) * 1000;
            timers.schedule(s.clientId(), s.epoch(), SessionTimers.Kind.WILL, due, now,
                    () -> willDue(s.clientId(), s.epoch()));
        }
        long ends = s.expiresAtMillis();
        if (ends != Long.MAX_VALUE) {
            timers.schedule(s.clientId(), s.epoch(), SessionTimers.Kind.EXPIRY, ends, now,
                    () -> expiryDue(s.clientId(), s.epoch()));
        }
    }

    private boolean mine(SessionState s) {
        return owned.contains(partitionOf(s.clientId())) && !membership.isAlive(s.nodeId(), s.nodeIncarnation());
    }

    private void willDue(String clientId, long epoch) {
        current(clientId, epoch).filter(s -> !s.connected() && s.will() != null && mine(s)).ifPresent(s -> {
            publishWill(clientId, s.will().message());
            write(s.disconnected(s.disconnectedAtMillis(), s.sessionExpirySeconds(), null));
        });
    }

    private void expiryDue(String clientId, long epoch) {
        current(clientId, epoch).filter(s -> !s.connected() && mine(s) && s.expiresAtMillis() <= clock.getAsLong())
                .ifPresent(s -> {
                    if (s.will() != null) {
                        publishWill(clientId, s.will().message()); // the session ends first [MQTT-3.1.3-9]
                    }
                    delete(clientId);
                    deleteSubscriptions(clientId, epoch);
                });
    }

    // ------------------------------------------------------------------ output

    /** Stores a session's state: decided by the event being handled, or (timers, settlements) by the same one as before. */
    private void write(SessionState decided) {
        SessionState state = deciding != SessionState.UNKNOWN ? decided.withDecidedAt(deciding) : decided;
        SessionDirectory.Pending p = directory.written(state.clientId(), state);
        track(producer.send(topics.sessions(), null, state.clientId(), ClusterCodec.encode(state),
                        decidedHeader(state.decidedAt()))
                .whenComplete((m, e) -> settle(state.clientId(), p, m, e)));
    }

    private static RecordHeaders decidedHeader(long decidedAt) {
        RecordHeaders headers = new RecordHeaders();
        if (decidedAt != SessionState.UNKNOWN) {
            headers.add(DECIDED_AT_HEADER, ByteBuffer.allocate(Long.BYTES).putLong(decidedAt).array());
        }
        return headers;
    }

    private void delete(String clientId) {
        SessionState ending = directory.get(clientId).orElse(null);
        if (appTopics != null && ending != null && ClientTypes.APPLICATION.equals(ending.clientType())) {
            appTopics.delete(clientId); // the session's backlog ends with it
        }
        timers.cancel(clientId);
        long decidedAt = deciding != SessionState.UNKNOWN ? deciding : directory.decidedAt(clientId);
        SessionDirectory.Pending p = directory.deleted(clientId, decidedAt);
        track(producer.send(topics.sessions(), null, clientId, null, decidedHeader(decidedAt))
                .whenComplete((m, e) -> settle(clientId, p, m, e)));
    }

    private void settle(String clientId, SessionDirectory.Pending p, org.apache.kafka.clients.producer.RecordMetadata m,
            Throwable e) {
        if (e == null) {
            directory.stored(p, m.offset());
        } else {
            directory.failed(clientId, p); // the batch is read again and decides from what is stored
            log.warn("Session state of {} not stored: {}", ClientText.of(clientId), e.toString());
        }
    }

    /** Removes a session's subscriptions on every node, this one included. */
    private void deleteSubscriptions(String clientId, long epoch) {
        if (deviceQueues != null) {
            // The session of a gone node ended here: its DEVICE queue goes with it. The delete is
            // retried until Redis takes it; it is not one of the batch's writes, so a Redis outage
            // does not hold up the connect sequence.
            deviceQueues.delete(clientId).thenAccept(held -> {
                for (long i = 0; i < held; i++) {
                    drops.count(MessageDrops.Reason.SESSION_ENDED);
                }
            });
        }
        track(producer.send(topics.subscriptions(), null, clientId, null, ClusterLink.headers(epoch)));
    }

    private void command(String node, NodeCommand command) {
        if (here != null && node.equals(nodeId)) {
            forHere.add(command);
            return;
        }
        byte[] clearStore = ClusterCodec.clearStoreHeader(command);
        RecordHeaders headers = null;
        if (clearStore != null) {
            headers = new RecordHeaders();
            headers.add(ClusterCodec.CLEAR_STORE_HEADER, clearStore);
        }
        track(producer.send(topics.node(node), null, command.clientId(), ClusterCodec.encode(command), headers));
    }

    private void publishWill(String clientId, BrokerMessage will) {
        BrokerMessage message = new BrokerMessage(will.topic(), will.payload(), will.qos(), will.retain(), clientId,
                clock.getAsLong(), will.expiryIntervalSeconds(), will.payloadFormat(), will.contentType(),
                will.responseTopic(), will.correlationData(), will.userProperties());
        track(publishLog.append(message).whenComplete((ok, e) -> {
            if (e != null) {
                drops.count(MessageDrops.Reason.PUBLISH_NOT_STORED, clientId, will.topic());
                log.warn("Will of {} not stored: {}", ClientText.of(clientId), e.toString());
            }
        }));
        log.debug("Published the will of {} to {}", clientId, will.topic());
    }

    private void track(CompletableFuture<?> f) {
        inFlight.add(f);
    }

    /** The {@code session.events} partition of a client ID, as Kafka's default partitioner picks it. */
    int partitionOf(String clientId) {
        return Utils.toPositive(Utils.murmur2(clientId.getBytes(StandardCharsets.UTF_8))) % partitions;
    }

    String nodeId() {
        return nodeId;
    }
}
