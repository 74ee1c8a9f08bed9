package io.fleetmq.session.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.cluster.NodeCommand;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageFormatException;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.kafka.BrokerTopics;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.cluster.Membership;
import io.fleetmq.persistence.redis.DeviceQueues;
import io.fleetmq.persistence.redis.Redis;
import io.fleetmq.persistence.redis.RedisSettings;
import io.fleetmq.session.MessageDrops;
import io.fleetmq.session.QueueReaderTag;
import io.fleetmq.testkit.TestServices;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Who the DEVICE queue writer tells of a new entry, on the embedded Kafka and Redis. The writer's
 * directory here never hears of the client's connection: as on a node whose copy of the
 * {@code sessions} topic lags behind the connect that just happened.
 */
class DeviceQueueWriterTest {

    private static final String NODE = "writer-node";
    private static final String CLIENT = "dev-1";

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final List<NodeCommand> notices = new CopyOnWriteArrayList<>();
    private Membership membership;
    private DeviceQueues queues;
    private DeviceQueueWriter writer;
    private Redis redis;
    private String prefix;

    @BeforeEach
    void writer() throws Exception {
        TestServices services = TestServices.shared();
        prefix = "w" + System.nanoTime() + ".";
        KafkaNode node = KafkaNode.start(services.kafkaBootstrapServers(), prefix, NODE, closing);
        BrokerTopics topics = node.topics();
        KafkaClients clients = node.clients();
        membership = node.membership();
        ClusterProducer producer = new ClusterProducer(clients);
        closing.add(producer);
        redis = Redis.connect(new RedisSettings(services.redisUrl(), Duration.ofSeconds(5)));
        closing.add(redis);
        queues = new DeviceQueues(redis.binaryCommands(), prefix, 100, Duration.ofMinutes(5));
        writer = new DeviceQueueWriter(queues, new SessionDirectory(), membership, producer, topics,
                new MessageDrops(new SimpleMeterRegistry()), Duration.ofSeconds(10), NODE, notices::add);
    }

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        closing.clear();
    }

    private static Downlink downlink(long sourceOffset) {
        return downlink(CLIENT, sourceOffset);
    }

    private static Downlink downlink(String client, long sourceOffset) {
        BrokerMessage m = new BrokerMessage("d/" + client, ("m" + sourceOffset).getBytes(StandardCharsets.UTF_8), 1,
                false, "pub", System.currentTimeMillis(), BrokerMessage.NO_EXPIRY, BrokerMessage.PAYLOAD_FORMAT_ABSENT,
                null, null, null, List.of());
        return new Downlink(0, sourceOffset, m, List.of(new Subscription(client, "d/#", null, 1, false, false, 0, 0,
                NODE)));
    }

    private void write(long... sourceOffsets) {
        for (long offset : sourceOffsets) {
            writer.handle(record(downlink(offset)), 0, offset);
        }
        assertTrue(writer.flushed(), "the batch is in Redis");
    }

    private static DeviceQueueWriter.Stored record(Downlink d) {
        try {
            return DeviceQueueWriter.Stored.decode(ClusterCodec.encode(d));
        } catch (MessageFormatException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * A batch fails after some of its appends were stored (another client's queue cannot be written);
     * the client connects here before the batch is read again. Its messages of that batch go to
     * Redis again, which knows the stored ones by their source position, not to its session, which
     * would send them a second time; once a batch is stored whole, its next messages go to the session.
     */
    @Test
    void messagesWhoseAppendFailedWithTheirBatchGoToRedisAgainThoughTheClientConnectedHereMeanwhile()
            throws Exception {
        io.fleetmq.session.LiveDeliveries live = new io.fleetmq.session.LiveDeliveries();
        writer.live(live, Duration.ofMinutes(1));
        String broken = "dev-broken";
        for (String suffix : List.of("i", "d", "m", "p", "a", "b", "s")) {
            redis.sync().xadd(prefix + "q:{" + broken + "}:" + suffix, java.util.Map.of("not", "a queue"));
        }
        writer.handle(record(downlink(1)), 0, 1);
        writer.handle(record(downlink(2)), 0, 2);
        writer.handle(record(downlink(broken, 3)), 0, 3);
        assertEquals(false, writer.flushed(), "the broken queue fails the batch");

        List<List<Long>> offered = new CopyOnWriteArrayList<>();
        live.register(CLIENT, records -> {
            offered.add(records.stream().map(io.fleetmq.session.LiveDeliveries.Offered::offset).toList());
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        });
        for (String suffix : List.of("i", "d", "m", "p", "a", "b", "s")) {
            redis.sync().del(prefix + "q:{" + broken + "}:" + suffix);
        }
        writer.handle(record(downlink(1)), 0, 1); // the batch read again, and one more
        writer.handle(record(downlink(2)), 0, 2);
        writer.handle(record(downlink(broken, 3)), 0, 3);
        writer.handle(record(downlink(4)), 0, 4);
        assertTrue(writer.flushed());
        assertEquals(List.of(), offered, "nothing of the failed batch went to the session");
        assertEquals(List.of(1L, 2L, 4L), queued(CLIENT), "each once, in order");

        writer.handle(record(downlink(5)), 0, 5);
        assertTrue(writer.flushed());
        assertEquals(List.of(List.of(5L)), offered, "after a stored batch, the session takes its messages");
        assertEquals(List.of(1L, 2L, 4L), queued(CLIENT));
    }

    private List<Long> queued(String client) throws Exception {
        List<Long> offsets = new ArrayList<>();
        for (DeviceQueues.Entry e : queues.read(client, 0, 100).toCompletableFuture().join()) {
            offsets.add(ClusterCodec.decodeDownlink(e.value()).sourceOffset());
        }
        return offsets;
    }

    @Test
    void anEntryIsTheRecordAsItWasRead() throws Exception {
        Downlink d = downlink(7);
        byte[] value = ClusterCodec.encode(d);
        writer.handle(DeviceQueueWriter.Stored.decode(value), 0, 7);
        assertTrue(writer.flushed());
        List<DeviceQueues.Entry> entries = queues.read(CLIENT, 0, 10).toCompletableFuture().join();
        assertEquals(1, entries.size());
        org.junit.jupiter.api.Assertions.assertArrayEquals(value, entries.get(0).value());
        assertEquals(d.message().topic(), ClusterCodec.decodeDownlink(entries.get(0).value()).message().topic());
    }

    /**
     * The write delay is recorded once per stored batch, for its oldest message: a message received
     * five seconds before its batch was stored shows at least those five seconds.
     */
    @Test
    void eachStoredBatchRecordsHowLongAfterReceiptItsOldestMessageWasStored() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        writer.meters(meters);
        io.micrometer.core.instrument.Timer delay = meters.get("fleetmq.device.queue.write.delay").timer();
        assertEquals(0, delay.count(), "nothing stored yet");

        Downlink fresh = downlink(1);
        Downlink old = new Downlink(0, 2, new BrokerMessage("d/" + CLIENT, "old".getBytes(StandardCharsets.UTF_8), 1,
                false, "pub", System.currentTimeMillis() - 5_000, BrokerMessage.NO_EXPIRY,
                BrokerMessage.PAYLOAD_FORMAT_ABSENT, null, null, null, List.of()), fresh.matched());
        writer.handle(record(fresh), 0, 1);
        writer.handle(record(old), 0, 2);
        assertTrue(writer.flushed(), "the batch is in Redis");

        assertEquals(1, delay.count(), "one sample per batch");
        assertTrue(delay.max(java.util.concurrent.TimeUnit.MILLISECONDS) >= 5_000,
                "the oldest message's delay: " + delay.max(java.util.concurrent.TimeUnit.MILLISECONDS));
        write(3);
        assertEquals(2, delay.count(), "the next batch, its own sample");
        assertTrue(delay.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS) < 5_000 + 60_000,
                "the second batch's message was not five seconds old");
    }

    private List<Long> noticedSeqs() {
        return notices.stream().map(n -> ((NodeCommand.Queued) n).seq()).toList();
    }

    @Test
    void aConnectionThatReadItsQueueHearsOfEveryLaterEntryThoughTheWriterHasNotSeenItConnect() {
        write(1);
        assertEquals(List.of(), notices, "nobody reads the queue yet");

        String reader = QueueReaderTag.of(membership.incarnation(), 1, NODE);
        assertEquals(1, queues.read(CLIENT, 0, 10, reader).toCompletableFuture().join().size());
        write(2, 3);
        assertEquals(List.of(2L, 3L), noticedSeqs(), "the entries the first read did not see are announced");

        notices.clear();
        queues.release(CLIENT, reader).toCompletableFuture().join();
        write(4);
        assertEquals(List.of(), notices, "the connection ended: nobody to tell");
    }

    @Test
    void aBatchWrittenAgainTellsTheReaderToLookThoughItsEntriesAreStoredAlready() {
        queues.read(CLIENT, 0, 10, QueueReaderTag.of(membership.incarnation(), 1, NODE)).toCompletableFuture().join();
        write(1, 2);
        notices.clear();
        write(1, 2); // the first attempt's answer was lost: the same records again
        assertEquals(List.of(0L), noticedSeqs(), "one notice without a sequence number");
    }

    @Test
    void aReaderOnANodeThatIsNotAliveIsNotTold() {
        queues.read(CLIENT, 0, 10, QueueReaderTag.of(membership.incarnation() + 1, 1, NODE)).toCompletableFuture()
                .join();
        write(1);
        queues.read(CLIENT, 0, 10, QueueReaderTag.of(1, 1, "gone-node")).toCompletableFuture().join();
        write(2);
        assertEquals(List.of(), notices, "another incarnation of this node, or a node not in the cluster");
        queues.read(CLIENT, 0, 10, QueueReaderTag.of(membership.incarnation(), 2, NODE)).toCompletableFuture().join();
        write(3);
        assertEquals(List.of(3L), noticedSeqs(), "the live incarnation is");
    }
}
