package io.fleetmq.kafka.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.core.cluster.ClusterCodec;
import io.fleetmq.core.cluster.Downlink;
import io.fleetmq.core.message.BrokerMessage;
import io.fleetmq.core.subscription.Subscription;
import io.fleetmq.kafka.KafkaClients;
import io.fleetmq.kafka.cluster.ClusterProducer;
import io.fleetmq.kafka.publish.TestLayout;
import io.fleetmq.testkit.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The routing node writes a message to a backlog again when it routes a batch again; the backlog's
 * reader lets each (publish partition, offset) through once, also after a restart, when the repeat
 * sits after the committed offset and its original before it.
 */
class AppBacklogRepeatsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Subscription SUB = new Subscription("app-1", "t/#", null, 1, false, false, 0, 0, null);

    private TestLayout layout;
    private KafkaClients clients;
    private Admin admin;
    private AppTopics appTopics;
    private ClusterProducer producer;

    @BeforeEach
    void setUp() {
        layout = TestLayout.create(1);
        clients = layout.clients("node-1");
        admin = clients.admin();
        appTopics = new AppTopics(admin, layout.settings(), Duration.ofHours(1), 10_000_000);
        assertTrue(appTopics.ensure("app-1"));
        producer = new ClusterProducer(clients);
    }

    @AfterEach
    void tearDown() {
        producer.close();
        admin.close();
    }

    private void write(int sourcePartition, long sourceOffset) {
        BrokerMessage m = BrokerMessage.of("t/" + sourcePartition, Long.toString(sourceOffset).getBytes(), 1, false,
                "pub", 1);
        producer.send(appTopics.topic("app-1"), 0, "app-1",
                ClusterCodec.encode(new Downlink(sourcePartition, sourceOffset, m, List.of(SUB))), null).join();
    }

    private static String source(AppBacklog.Record r) {
        try {
            Downlink.Source s = ClusterCodec.downlinkSource(r.value());
            return s.partition() + "/" + s.offset();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private long committed() {
        try {
            var offsets = admin.listConsumerGroupOffsets(appTopics.group("app-1")).partitionsToOffsetAndMetadata().get();
            var at = offsets.get(new TopicPartition(appTopics.topic("app-1"), 0));
            return at == null ? -1 : at.offset();
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void aMessageWrittenAgainIsReadOnceAlsoAfterTheReaderRestarts() throws Exception {
        write(0, 10);
        write(0, 11);
        write(1, 5);
        write(0, 10); // the batch was routed again
        write(0, 11);
        write(0, 12);

        List<AppBacklog.Record> first = new CopyOnWriteArrayList<>();
        AppBacklog reader = new AppBacklogs(clients, appTopics).open("app-1", first::addAll, false);
        reader.grant(100);
        Await.until(WAIT, "four messages are read", () -> first.size() >= 4);
        assertEquals(List.of("0/10", "0/11", "1/5", "0/12"), first.stream().map(AppBacklogRepeatsTest::source).toList());
        // The client acknowledged the first three only (backlog offsets 0..2).
        reader.commit(0, 3, 2);
        Await.until(WAIT, "the commit is made", () -> committed() == 3);
        reader.close();

        write(0, 11); // repeats after the committed offset whose originals sit before it
        write(1, 5);
        write(1, 6);

        List<AppBacklog.Record> second = new CopyOnWriteArrayList<>();
        AppBacklog again = new AppBacklogs(clients, appTopics).open("app-1", second::addAll, false);
        try {
            again.grant(100);
            Await.until(WAIT, "the messages not yet acknowledged are read", () -> second.size() >= 2);
            // Offset 3 and 4 (0/10, 0/11 again) are repeats of what was committed; 0/12 was read but not
            // acknowledged, so it comes again; 0/11 and 1/5 after it are repeats; 1/6 is new.
            assertEquals(List.of("0/12", "1/6"), second.stream().map(AppBacklogRepeatsTest::source).toList());
            assertEquals(5, second.get(0).offset());
            write(1, 7);
            Await.until(WAIT, "a message written later is read", () -> second.size() >= 3);
            assertEquals("1/7", source(second.get(2)));
        } finally {
            again.close();
        }
    }

    private void writeShared(String topic, int partition, int sourcePartition, long sourceOffset) {
        BrokerMessage m = BrokerMessage.of("t/" + sourcePartition, Long.toString(sourceOffset).getBytes(), 1, false,
                "pub", 1);
        producer.send(topic, partition, "t/" + sourcePartition,
                ClusterCodec.encode(new Downlink(sourcePartition, sourceOffset, m, List.of(SUB))), null).join();
    }

    private long committedShared(String topic, int partition) {
        try {
            var offsets = admin.listConsumerGroupOffsets(topic).partitionsToOffsetAndMetadata().get();
            var at = offsets.get(new TopicPartition(topic, partition));
            return at == null ? -1 : at.offset();
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void aSharedBacklogSkipsRepeatsPerPartitionAlsoForTheNextMember() throws Exception {
        AppTopics shared = new AppTopics(admin, layout.settings(), Duration.ofHours(1), 10_000_000, 2);
        assertTrue(shared.ensureSharedAsync("workers", "t/#").get(30, java.util.concurrent.TimeUnit.SECONDS));
        String topic = shared.sharedTopic("workers", "t/#");
        // Both backlog partitions hold messages of publish partition 0: each keeps its own positions.
        writeShared(topic, 0, 0, 4);
        writeShared(topic, 1, 0, 3);
        writeShared(topic, 0, 0, 4); // routed again
        writeShared(topic, 1, 0, 3);
        writeShared(topic, 1, 0, 5);

        List<AppBacklog.Record> first = new CopyOnWriteArrayList<>();
        AppBacklog member = new AppBacklogs(clients, shared).openShared("workers", "t/#", first::addAll, p -> { });
        member.grant(100);
        Await.until(WAIT, "three messages are read", () -> first.size() >= 3);
        assertEquals(List.of("0/4"), first.stream().filter(r -> r.partition() == 0)
                .map(AppBacklogRepeatsTest::source).toList());
        assertEquals(List.of("0/3", "0/5"), first.stream().filter(r -> r.partition() == 1)
                .map(AppBacklogRepeatsTest::source).toList());
        member.commit(0, 1, 0); // acknowledged: 0/4 of partition 0 and 0/3 of partition 1
        member.commit(1, 1, 0);
        Await.until(WAIT, "both commits are made", () -> committedShared(topic, 0) == 1 && committedShared(topic, 1) == 1);
        member.close();

        writeShared(topic, 0, 0, 4); // repeats after the committed offsets
        writeShared(topic, 1, 0, 3);
        writeShared(topic, 0, 0, 6);

        List<AppBacklog.Record> second = new CopyOnWriteArrayList<>();
        AppBacklog next = new AppBacklogs(clients, shared).openShared("workers", "t/#", second::addAll, p -> { });
        try {
            next.grant(100);
            Await.until(WAIT, "what was not acknowledged and what is new are read", () -> second.size() >= 2);
            assertEquals(List.of("0/6"), second.stream().filter(r -> r.partition() == 0)
                    .map(AppBacklogRepeatsTest::source).toList());
            assertEquals(List.of("0/5"), second.stream().filter(r -> r.partition() == 1)
                    .map(AppBacklogRepeatsTest::source).toList());
        } finally {
            next.close();
        }
    }
}
