package io.fleetmq.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.message.MessageCodec;
import io.fleetmq.kafka.publish.PublishLog;
import io.fleetmq.kafka.publish.TestLayout;
import io.fleetmq.testkit.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A consumer with a commit interval commits handled records at most that often while records keep
 * coming, and everything handled once its partitions are idle or it stops; against the embedded Kafka.
 */
class GroupConsumerCommitTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int CHAIN = 20;

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
        return BrokerMessage.of("chain/p", ByteBuffer.allocate(4).putInt(sequence).array(), 1, false, "p",
                System.currentTimeMillis());
    }

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
