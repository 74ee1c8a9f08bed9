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
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A group consumer whose loop fails unexpectedly is restarted by its supervisor, against the
 * embedded Kafka: a new consumer rejoins the group and reads on, losing nothing.
 */
class GroupConsumerSupervisionTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private PublishLog log;
    private GroupConsumer<BrokerMessage> consumer;

    @AfterEach
    void tearDown() {
        if (consumer != null) {
            consumer.close();
        }
        if (log != null) {
            log.close();
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
}
