package io.fleetmq.kafka.app;

import io.fleetmq.kafka.KafkaClients;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the backlog topic of one connected persistent APPLICATION client, from the offset last
 * committed for it, on a thread of its own, and hands records to the client's session as it asks
 * for them ({@link #grant}): a client that does not keep up makes its backlog wait in Kafka, not in
 * the broker's heap.
 *
 * <p>The session commits ({@link #commit}) only offsets below which every record was delivered:
 * acknowledged at QoS 1/2, sent at QoS 0. The commit also records the highest offset ever sent, so
 * after a reconnect the records up to it are marked as redeliveries (DUP).
 */
public final class AppBacklog implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AppBacklog.class);

    /** One record for the session; {@code redelivery} if it was sent to the client before. */
    public record Record(long offset, byte[] value, boolean redelivery) {
    }

    private final KafkaClients clients;
    private final TopicPartition partition;
    private final String groupId;
    private final Consumer<List<Record>> sink;
    private final ConcurrentLinkedQueue<Runnable> requests = new ConcurrentLinkedQueue<>();
    private final Object credit = new Object();
    private int credits;
    private volatile boolean stopping;
    private volatile KafkaConsumer<String, byte[]> consumer;
    private Thread thread;
    private long lastSentBefore = -1;
    private long lastCommitted = -1;
    private final long startAtMillis;

    /**
     * @param sink called on the backlog's thread with records, never more than granted; it should
     *             hand them to the session's mailbox
     */
    public AppBacklog(KafkaClients clients, String topic, String groupId, Consumer<List<Record>> sink,
            long startAtMillis) {
        this.startAtMillis = startAtMillis;
        this.clients = clients;
        this.partition = new TopicPartition(topic, 0);
        this.groupId = groupId;
        this.sink = sink;
    }

    public void start() {
        thread = new Thread(this::run, "fleetmq-app-" + partition.topic());
        thread.setDaemon(true);
        thread.start();
    }

    /** The session can take {@code n} more records. */
    public void grant(int n) {
        synchronized (credit) {
            credits += n;
            credit.notifyAll();
        }
    }

    /**
     * Every record below {@code nextOffset} was delivered; {@code lastSent} is the highest offset
     * ever sent to the client.
     */
    public void commit(long nextOffset, long lastSent) {
        requests.add(() -> {
            if (nextOffset > lastCommitted || lastSent > lastSentBefore) {
                consumer.commitSync(Map.of(partition, new OffsetAndMetadata(nextOffset, "lastSent=" + lastSent)),
                        clients.settings().requestTimeout());
                lastCommitted = nextOffset;
                lastSentBefore = Math.max(lastSentBefore, lastSent);
            }
        });
        wake();
    }

    /**
     * Gets the thread out of its wait or poll at once: a commit must not wait for the next poll,
     * since a client that comes back on another node reads the committed offset right away.
     */
    private void wake() {
        synchronized (credit) {
            credit.notifyAll();
        }
        KafkaConsumer<String, byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }

    private void run() {
        ArrayDeque<Record> buffer = new ArrayDeque<>();
        try {
            consumer = clients.consumer("app", groupId, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500));
            consumer.assign(List.of(partition));
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.of(partition),
                    clients.settings().requestTimeout());
            OffsetAndMetadata at = committed.get(partition);
            if (startAtMillis >= 0) {
                // A new session: start where its time starts, whatever an earlier one left behind.
                var found = consumer.offsetsForTimes(Map.of(partition, startAtMillis), clients.settings().requestTimeout())
                        .get(partition);
                if (found != null) {
                    consumer.seek(partition, found.offset());
                } else {
                    consumer.seekToEnd(List.of(partition));
                }
                consumer.position(partition, clients.settings().requestTimeout());
            } else if (at != null) {
                consumer.seek(partition, at.offset());
                lastCommitted = at.offset();
                String meta = at.metadata();
                if (meta != null && meta.startsWith("lastSent=")) {
                    lastSentBefore = Long.parseLong(meta.substring("lastSent=".length()));
                }
            } else {
                consumer.seekToBeginning(List.of(partition));
            }
            long sentBeforeStart = lastSentBefore;
            log.info("Reading backlog {} from offset {} (sent before up to {})", partition.topic(),
                    consumer.position(partition, clients.settings().requestTimeout()), sentBeforeStart);
            while (!stopping) {
                runRequests();
                int take;
                synchronized (credit) {
                    take = Math.min(credits, buffer.size());
                    credits -= take;
                }
                if (take > 0) {
                    List<Record> batch = new ArrayList<>(take);
                    for (int i = 0; i < take; i++) {
                        batch.add(buffer.poll());
                    }
                    sink.accept(batch);
                    continue;
                }
                if (buffer.isEmpty()) {
                    try {
                        for (ConsumerRecord<String, byte[]> rec : consumer.poll(Duration.ofMillis(100))) {
                            if (rec.value() != null) {
                                buffer.add(new Record(rec.offset(), rec.value(), rec.offset() <= sentBeforeStart));
                            }
                        }
                    } catch (WakeupException e) {
                        continue; // a commit or close asked for the thread
                    }
                } else {
                    synchronized (credit) {
                        if (credits == 0 && requests.isEmpty() && !stopping) {
                            credit.wait(200);
                        }
                    }
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.error("Backlog of {} failed", partition.topic(), e);
        } finally {
            try {
                runRequests();
            } catch (RuntimeException e) {
                log.warn("Final commit of {} failed: {}", partition.topic(), e.toString());
            }
            if (consumer != null) {
                consumer.close(CloseOptions.timeout(clients.settings().requestTimeout()));
            }
        }
    }

    /** Runs the commits asked for; a wakeup meant for a poll only makes one of them run again. */
    private void runRequests() {
        Runnable r;
        while ((r = requests.peek()) != null) {
            try {
                r.run();
                requests.poll();
            } catch (WakeupException e) {
                // the flag is cleared now: the commit runs again
            }
        }
    }

    /**
     * Stops reading; the backlog's thread makes the commits asked for so far, then ends. Does not
     * wait for it, so a session may call it on its own turn.
     */
    @Override
    public void close() {
        stopping = true;
        wake();
    }
}
