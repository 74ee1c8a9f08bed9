package io.fleetmq.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.kafka.publish.PublishLog;
import io.fleetmq.kafka.publish.TestLayout;
import io.fleetmq.kafka.supervise.LoopSupervisor;
import io.fleetmq.testkit.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A group consumer's loop against the embedded Kafka: one that fails unexpectedly is restarted by
 * its supervisor and reads on, losing nothing; one with a commit interval commits at most that often
 * while records keep coming, and everything handled once its partitions are idle or it stops.
 */
class GroupConsumerSupervisionTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private PublishLog log;
    private GroupConsumer<BrokerMessage> consumer;
    private Admin admin;

    @AfterEach
    void tearDown() {
        if (consumer != null) {
            consumer.close();
        }
        if (log != null) {
            log.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    private static BrokerMessage numbered(int sequence) {
        return BrokerMessage.of("seq/p", ByteBuffer.allocate(4).putInt(sequence).array(), 1, false, "p",
                System.currentTimeMillis());
    }

    private void append(int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            log.append(numbered(i)).get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aConsumerThatThrowsUnexpectedlyRejoinsAndLosesNothing() throws Exception {
        TestLayout layout = TestLayout.create(2);
        log = new PublishLog(layout.clients("publisher"), meters);
        LoopSupervisor supervisor = new LoopSupervisor(meters,
                new LoopSupervisor.Policy(Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ofMinutes(1)));
        AtomicBoolean failedOnce = new AtomicBoolean();
        Set<Integer> received = ConcurrentHashMap.newKeySet();
        // Not a malformed record (that is skipped and counted): a fault the loop does not expect.
        GroupConsumer.Decoder<BrokerMessage> faulty = bytes -> {
            BrokerMessage m = MessageCodec.decode(bytes);
            if (ByteBuffer.wrap(m.payload()).getInt() == 3 && failedOnce.compareAndSet(false, true)) {
                throw new IllegalStateException("unexpected fault in the loop");
            }
            return m;
        };
        consumer = new GroupConsumer<>(layout.clients("node-1"), meters, layout.topics().publish(),
                layout.settings().topicPrefix() + "supervised", "supervised", faulty,
                (m, partition, offset) -> received.add(ByteBuffer.wrap(m.payload()).getInt()),
                GroupConsumer.Hooks.none().withSupervisor(supervisor));
        consumer.start();

        append(0, 10);
        Await.until(WAIT, "every record before and after the fault handled", () -> received.size() == 10);
        assertTrue(failedOnce.get(), "the fault happened");
        assertEquals(1.0, supervisor.restarts("supervised-consumer"), "one restart, counted");
        assertTrue(consumer.isRunning());
        assertTrue(supervisor.healthy());

        // The new consumer owns the partitions again and keeps reading.
        Await.until(WAIT, "the partitions owned again", () -> consumer.ownedPartitions().equals(Set.of(0, 1)));
        append(10, 15);
        Await.until(WAIT, "records written after the restart", () -> received.size() == 15);
        assertEquals(new TreeSet<>(IntStream.range(0, 15).boxed().toList()), new TreeSet<>(received));
    }

    private static final int CHAIN = 20;

    private long committed(String group, TopicPartition partition) {
        try {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            OffsetAndMetadata o = offsets.get(partition);
            return o == null ? 0 : o.offset();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void whileRecordsKeepComingCommitsWaitForTheIntervalAndAnIdlePartitionIsCommittedAtOnce() throws Exception {
        TestLayout layout = TestLayout.create(1);
        log = new PublishLog(layout.clients("publisher"), meters);
        admin = layout.clients("admin").admin();
        String group = layout.settings().topicPrefix() + "interval";
        TopicPartition partition = new TopicPartition(layout.topics().publish(), 0);
        List<Long> committedDuringTheChain = new CopyOnWriteArrayList<>();
        List<Integer> handled = new CopyOnWriteArrayList<>();
        // Each record's handler writes the next one before it returns, so every poll finds a record
        // until the chain ends: the partition is never idle while it lasts.
        GroupConsumer.Handler<BrokerMessage> handler = (m, p, offset) -> {
            int n = ByteBuffer.wrap(m.payload()).getInt();
            try {
                if (n + 1 < CHAIN) {
                    log.append(numbered(n + 1)).get(30, TimeUnit.SECONDS);
                } else {
                    committedDuringTheChain.add(committed(group, partition));
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            handled.add(n);
        };
        consumer = new GroupConsumer<>(layout.clients("node-1"), meters, partition.topic(), group, "interval",
                MessageCodec::decode, handler, GroupConsumer.Hooks.none().withCommitInterval(Duration.ofHours(1)));
        consumer.start();
        Await.until(WAIT, "the partition assigned", () -> consumer.ownedPartitions().equals(java.util.Set.of(0)));

        log.append(numbered(0)).get(30, TimeUnit.SECONDS);
        Await.until(WAIT, "the whole chain handled", () -> handled.size() == CHAIN);
        assertEquals(List.of(0L), committedDuringTheChain,
                "nothing committed while records kept coming, within the interval");
        Await.until(WAIT, "everything committed once the partition was idle", () -> committed(group, partition) == CHAIN);

        log.append(numbered(CHAIN)).get(30, TimeUnit.SECONDS);
        Await.until(WAIT, "one more record handled", () -> handled.size() == CHAIN + 1);
        consumer.close();
        assertEquals(CHAIN + 1, committed(group, partition), "committed when the consumer stopped");
        assertTrue(handled.stream().distinct().count() == CHAIN + 1, "each record handled once: " + handled);
    }
}
