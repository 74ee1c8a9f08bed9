package io.fleetmq.session.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.cluster.SessionEvent;
import io.fleetmq.core.cluster.SessionState;
import io.fleetmq.embedded.EmbeddedKafkaServer;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.kafka.cluster.StateFollower;
import io.fleetmq.kafka.publish.PublishLog;
import io.fleetmq.session.MessageDrops;
import io.fleetmq.testkit.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.fleetmq.core.message.BrokerMessage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The connect sequence on a real Kafka: events are handed to a real sequencer as the consumer does,
 * and what it stored, answered and commanded is read back from the topics.
 *
 * <p>It reads a batch of {@code session.events} again after one of its writes failed, or when it takes
 * a partition over from a node that decided the batch but did not commit it: each event is decided once.
 *
 * <p>A CONNECT that takes over a connection on another live node waits for that node's word
 * ({@link SessionEvent.Released}), so that a DISCONNECT the node read first decides the session's fate.
 */
class ConnectSequencerTest {

    private static final String NODE = "n1";
    private static final String OTHER = "n2";
    private static final BrokerMessage WILL = new BrokerMessage("wills/x", "gone".getBytes(StandardCharsets.UTF_8),
            1, false, "x", 0, BrokerMessage.NO_EXPIRY, BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null,
            List.of());

    @TempDir
    static Path dir;

    private static EmbeddedKafkaServer kafka;

    private final List<AutoCloseable> closing = new ArrayList<>();
    private KafkaClients clients;
    private BrokerTopics topics;
    private Membership membership;
    private KafkaNode other;
    private SessionDirectory directory;
    private ConnectSequencer sequencer;
    private ScheduledExecutorService timers;
    private SimpleMeterRegistry meters;
    /** What the sequence handed this node's own sessions, in order. */
    private final List<NodeCommand> here = java.util.Collections.synchronizedList(new ArrayList<>());
    /** Run with each command handed over here, before it is recorded. */
    private java.util.function.Consumer<NodeCommand> onHandOver = c -> { };

    @BeforeAll
    static void startKafka() throws Exception {
        kafka = new EmbeddedKafkaServer(dir, "127.0.0.1", 0, 0);
        kafka.start();
    }

    @AfterAll
    static void stopKafka() {
        if (kafka != null) {
            kafka.stop();
        }
    }

    @BeforeEach
    void sequencer() throws Exception {
        String prefix = "r" + System.nanoTime() + ".";
        KafkaNode node = KafkaNode.start(kafka.bootstrapServers(), prefix, NODE, closing);
        other = KafkaNode.start(kafka.bootstrapServers(), prefix, OTHER, closing);
        topics = node.topics();
        clients = node.clients();
        membership = node.membership();
        Admin admin = node.admin();
        directory = new SessionDirectory();
        StateFollower follower = new StateFollower(clients, admin, topics.sessions(), record -> {
            try {
                directory.applied(record.key(),
                        record.value() == null ? null : ClusterCodec.decodeSessionState(record.value()),
                        record.offset(), ConnectSequencer.decidedAt(record.headers()));
            } catch (MessageFormatException e) {
                throw new IllegalStateException(e);
            }
        });
        closing.add(follower);
        follower.start(Duration.ofSeconds(30));
        ClusterProducer producer = new ClusterProducer(clients);
        closing.add(producer);
        PublishLog publishLog = new PublishLog(clients, new SimpleMeterRegistry());
        closing.add(publishLog);
        timers = Executors.newSingleThreadScheduledExecutor();
        closing.add(timers::shutdownNow);
        sequencer = new ConnectSequencer(NODE, topics, producer, membership, directory, follower, publishLog,
                new MessageDrops(new SimpleMeterRegistry()), timers, System::currentTimeMillis, 2,
                Duration.ofSeconds(10), null);
        meters = new SimpleMeterRegistry();
        sequencer.meters(meters);
        sequencer.localCommands(c -> {
            onHandOver.accept(c);
            here.add(c);
        });
    }

    @Test
    void aDisconnectReadBeforeTheTakeOverEndsTheSessionTheResumingConnectFinds() throws Exception {
        sequencer.releaseWait(Duration.ofMinutes(5)); // only the node's word decides
        batch(0, connectOn(OTHER, "r1", "e", true, 0, new SessionState.PendingWill(WILL, 0)));
        // The client sent DISCONNECT to n2, then CONNECT (Clean Start 0) to n1; n1's event came first.
        batch(1, connect("r2", "e", false, 0));
        Await.until(Duration.ofSeconds(10), "the takeover sent to n2",
                () -> takeOvers(OTHER).contains("TakeOver e@2"));
        assertEquals(List.of(), answersWithPresence(), "the CONNECT waits for n2's word");

        batch(2, new SessionEvent.Disconnected("e", 1, 0, null, System.currentTimeMillis()));
        assertEquals(List.of(), answersWithPresence(), "the session ended; the CONNECT still waits for n2's word");
        batch(3, new SessionEvent.Released("e", 2));

        assertEquals(List.of("r2@1 present=false"), answersWithPresence(),
                "Session Expiry 0 ended the session with its connection: a new session, none present");
        assertEquals(0, readAll(topics.publish()).size(), "a DISCONNECT discards the will");
        assertEquals(1.0, takeOverCount("released"));
    }

    @Test
    void aConnectionStillOpenIsTakenOverOnceItsNodeLetItGo() throws Exception {
        sequencer.releaseWait(Duration.ofMinutes(5));
        batch(0, connectOn(OTHER, "r1", "f", true, 0, null));
        batch(1, connect("r2", "f", false, 0), connect("r3", "f", false, 60));
        Await.until(Duration.ofSeconds(10), "the takeover sent to n2",
                () -> takeOvers(OTHER).contains("TakeOver f@2"));
        batch(3, new SessionEvent.Released("f", 1)); // about another takeover: not the one awaited
        assertEquals(List.of(), answersWithPresence());

        batch(4, new SessionEvent.Released("f", 2));

        assertEquals(List.of("r2@2 present=true", "r3@3 present=true"), answersWithPresence(),
                "both CONNECTs, in order; the second takes the session from the first on this same node");
        SessionState stored = directory.get("f").orElseThrow();
        assertEquals("r3", stored.requestId());
        assertEquals(NODE, stored.nodeId());
        assertEquals(1.0, takeOverCount("released"), "the second CONNECT took over on this same node: no wait");
    }

    @Test
    void withoutAWordFromItsNodeTheTakeOverIsDecidedAfterTheWait() throws Exception {
        sequencer.releaseWait(Duration.ofMillis(200));
        batch(0, connectOn(OTHER, "r1", "g", true, 30, null));
        batch(1, connect("r2", "g", false, 30));

        Await.until(Duration.ofSeconds(10), "the answer after the wait", () -> {
            sequencer.idle(); // the consumer's idle turn runs what the timer handed over
            return !answersWithPresence().isEmpty();
        });
        assertEquals(List.of("r2@2 present=true"), answersWithPresence());
        assertEquals(1.0, takeOverCount("timed_out"));
        assertEquals(0.0, takeOverCount("released"));
    }

    @Test
    void aTakeOverWhileTheNodeStopsIsDecidedWithoutTheWait() throws Exception {
        sequencer.releaseWait(Duration.ofMinutes(5));
        batch(0, connectOn(OTHER, "r1", "k", true, 0, null));
        timers.shutdownNow(); // the node stops: no timer can be set any more

        batch(1, connect("r2", "k", false, 0));

        assertEquals(List.of("r2@2 present=true"), answersWithPresence(),
                "decided at once, as before the wait existed");
        assertEquals(1.0, takeOverCount("stopping"));
    }

    private SessionEvent.Connect connectOn(String node, String requestId, String clientId, boolean cleanStart,
            long expiry, SessionState.PendingWill will) {
        long incarnation = node.equals(NODE) ? membership.incarnation() : other.membership().incarnation();
        Await.until(Duration.ofSeconds(10), node + " seen alive", () -> membership.isAlive(node, incarnation));
        return new SessionEvent.Connect(requestId, clientId, node, incarnation, cleanStart, expiry, will,
                ClientTypes.DEVICE, null);
    }

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        closing.clear();
    }

    private SessionEvent.Connect connect(String requestId, String clientId, boolean cleanStart, long expiry) {
        return new SessionEvent.Connect(requestId, clientId, NODE, membership.incarnation(), cleanStart, expiry,
                null, ClientTypes.DEVICE, null);
    }

    /** Hands events to the sequence as one polled batch and commits it (its writes are all stored). */
    private void batch(long firstOffset, SessionEvent... events) {
        for (int i = 0; i < events.length; i++) {
            sequencer.handle(events[i], sequencer.partitionOf(events[i].clientId()), firstOffset + i);
        }
        assertTrue(sequencer.flushed(), "the batch's writes are stored");
    }

    @Test
    void thisNodesAnswersSkipItsNodeTopicAndComeOnceTheirSessionStateIsStored() throws Exception {
        List<Long> storedWhenAnswered = new ArrayList<>();
        onHandOver = c -> storedWhenAnswered.add(sessionRecords(c.clientId()));
        SessionEvent.Connect mine = connect("r1", "h", true, 0);
        SessionEvent.Connect theirs = connectOn(OTHER, "r2", "o", true, 0, null);

        sequencer.handle(mine, sequencer.partitionOf("h"), 0);
        sequencer.handle(theirs, sequencer.partitionOf("o"), 1);
        assertEquals(List.of(), answers(), "nothing is answered before the batch's writes are done");
        assertTrue(sequencer.flushed());

        assertEquals(List.of("r1@1"), answers());
        assertEquals(List.of(1L), storedWhenAnswered, "the session's state was in Kafka when it was answered");
        assertEquals(0, readAll(topics.node(NODE)).size(), "nothing went through this node's topic");
        assertEquals(List.of("r2@1"), answersTo(OTHER), "another node's answer goes through its topic");
    }

    @Test
    void twoConnectsOfOneClientInABatchReadAgainAreNotDecidedAgain() throws Exception {
        SessionEvent.Connect older = connect("r1", "c", true, 0);
        SessionEvent.Connect newer = connect("r2", "c", false, 60);
        batch(10, older, newer);

        batch(10, older, newer); // the same batch read again

        Await.until(Duration.ofSeconds(10), "the sessions topic read back",
                () -> directory.states().stream().anyMatch(s -> s.clientId().equals("c") && s.decidedAt() == 11));
        SessionState stored = directory.get("c").orElseThrow();
        assertEquals("r2", stored.requestId(), "the newer connection keeps the session");
        assertEquals(2, stored.epoch());
        assertEquals(List.of("r1@1", "r2@2", "r2@2"), answers(),
                "the newer CONNECT is answered again with the same epoch; the older one is not decided again");
        assertEquals(2, sessionRecords("c"), "nothing stored on the second read");
    }

    @Test
    void aSessionDeletedInTheBatchIsNotRevivedByItsConnectReadAgain() throws Exception {
        SessionEvent.Connect connect = connect("r1", "d", true, 0);
        SessionEvent.Disconnected gone = new SessionEvent.Disconnected("d", 1, 0, null, System.currentTimeMillis());
        batch(20, connect, gone);
        Await.until(Duration.ofSeconds(10), "the delete read back", () -> directory.decidedAt("d") == 21
                && directory.states().stream().noneMatch(s -> s.clientId().equals("d")));

        batch(20, connect, gone);

        assertEquals(java.util.Optional.empty(), directory.get("d"), "no session comes back");
        assertEquals(List.of("r1@1"), answers(), "the CONNECT of an ended session is not answered again");
        assertEquals(2, sessionRecords("d"), "the state and its tombstone, nothing after");
    }

    @Test
    void aConnectDecidedLastIsAnsweredAgainWhenItsBatchIsReadAgain() throws Exception {
        SessionEvent.Connect connect = connect("r1", "e", true, 30);
        batch(5, connect);
        batch(5, connect);

        assertEquals(List.of("r1@1", "r1@1"), answers(), "the answer may have been the write that failed");
        assertEquals(1, sessionRecords("e"));
    }

    @Test
    void aConnectTakenByANodeIncarnationThatIsGoneIsNotDecidedAndLeavesTheSessionAlone() throws Exception {
        batch(0, connect("r1", "s", false, 600));
        batch(1, new SessionEvent.Disconnected("s", 1, 600, null, System.currentTimeMillis()));
        // n2 took a CONNECT of the client, then stopped (fenced itself) before the sequence decided it.
        SessionEvent.Connect late = connectOn(OTHER, "r2", "s", false, 600, null);
        other.membership().close();
        Await.until(Duration.ofSeconds(10), "n2's incarnation seen gone",
                () -> membership.isGone(OTHER, late.nodeIncarnation()));

        batch(2, late);

        assertEquals(List.of(), answersTo(OTHER), "no answer to a node that is gone");
        Await.until(Duration.ofSeconds(10), "the sessions topic read back", () -> directory.decidedAt("s") == 1);
        SessionState kept = directory.get("s").orElseThrow();
        assertEquals("r1", kept.requestId(), "the session stays as it was");
        assertFalse(kept.connected());
        assertEquals(600, kept.sessionExpirySeconds());
        assertEquals(2, sessionRecords("s"), "nothing written for the stale CONNECT");
        assertEquals(1.0, meters.get("fleetmq.connect.stale").counter().count());
    }

    @Test
    void anAcceptanceUndoneByItsNodeKeepsTheExpiryTheSessionWasAcceptedWith() throws Exception {
        batch(0, connect("r1", "p", false, 600), connect("r2", "z", true, 0));

        // Neither connection came up on its node (it had refused them, or rejoined since): the node
        // undoes both acceptances without knowing their expiry.
        long now = System.currentTimeMillis();
        batch(2, new SessionEvent.Disconnected("p", 1, SessionEvent.Disconnected.KEEP_EXPIRY, null, now),
                new SessionEvent.Disconnected("z", 1, SessionEvent.Disconnected.KEEP_EXPIRY, null, now));

        Await.until(Duration.ofSeconds(10), "the sessions topic read back",
                () -> directory.decidedAt("p") == 2 && directory.decidedAt("z") == 3);
        SessionState offline = directory.get("p").orElseThrow();
        assertFalse(offline.connected());
        assertEquals(600, offline.sessionExpirySeconds(), "a persistent session stays, with what waits for it");
        assertEquals(java.util.Optional.empty(), directory.get("z"), "a session of expiry 0 ends with its connection");
        assertEquals(1, readAll(topics.subscriptions()).stream()
                .filter(r -> "z".equals(r.key()) && r.value() == null).count(),
                "no node holds it: its subscriptions end here too");
        assertEquals(0, readAll(topics.subscriptions()).stream().filter(r -> "p".equals(r.key())).count(),
                "the persistent session keeps them");
    }

    /** The ConnectAccepted commands sent to {@code node}, as requestId@epoch. */
    private List<String> answersTo(String node) {
        List<String> out = new ArrayList<>();
        for (NodeCommand c : commandsTo(node)) {
            if (c instanceof NodeCommand.ConnectAccepted a) {
                out.add(a.requestId() + "@" + a.epoch());
            }
        }
        return out;
    }

    /** The ConnectAccepted commands handed to this node, as requestId@epoch, in order. */
    private List<String> answers() {
        return answersTo(NODE);
    }

    private double takeOverCount(String outcome) {
        return meters.get("fleetmq.connect.takeovers").tag("outcome", outcome).counter().count();
    }

    /** The ConnectAccepted commands sent to this node, as requestId@epoch and the session present flag. */
    private List<String> answersWithPresence() {
        List<String> out = new ArrayList<>();
        for (NodeCommand c : commandsTo(NODE)) {
            if (c instanceof NodeCommand.ConnectAccepted a) {
                out.add(a.requestId() + "@" + a.epoch() + " present=" + a.sessionPresent());
            }
        }
        return out;
    }

    /** The takeovers sent to {@code node}, as "TakeOver clientId@epoch". */
    private List<String> takeOvers(String node) {
        List<String> out = new ArrayList<>();
        for (NodeCommand c : commandsTo(node)) {
            if (c instanceof NodeCommand.TakeOver t) {
                out.add("TakeOver " + t.clientId() + "@" + t.epoch());
            }
        }
        return out;
    }

    /** What {@code node} was sent: handed over directly to this node, through its node topic to another. */
    private List<NodeCommand> commandsTo(String node) {
        if (node.equals(NODE)) {
            synchronized (here) {
                return new ArrayList<>(here);
            }
        }
        List<NodeCommand> out = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> r : readAll(topics.node(node))) {
            if (r.value() != null) {
                try {
                    out.add(ClusterCodec.decodeCommand(r.value()));
                } catch (MessageFormatException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return out;
    }

    private long sessionRecords(String clientId) {
        return readAll(topics.sessions()).stream().filter(r -> clientId.equals(r.key())).count();
    }

    /** Every record of a one-partition topic up to its end now. */
    private List<ConsumerRecord<String, byte[]>> readAll(String topic) {
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = clients.consumer("test-read", null, Map.of())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            while (consumer.position(tp) < end) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }
}
