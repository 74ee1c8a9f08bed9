package io.fleetmq.core.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class MailboxTest {

    private final List<ExecutorService> pools = new ArrayList<>();

    private ExecutorService pool(int threads) {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        pools.add(pool);
        return pool;
    }

    @AfterEach
    void shutDownPools() throws InterruptedException {
        for (ExecutorService pool : pools) {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void tasksOfEachProducerRunInOrderOneAtATimeUnderManyProducers() throws Exception {
        int producers = 8;
        int tasksPerProducer = 20_000;
        Mailbox mailbox = new Mailbox(pool(4), "client-1");
        // Deliberately not thread-safe: only the mailbox's guarantees keep it intact.
        List<int[]> log = new ArrayList<>();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        CountDownLatch allRan = new CountDownLatch(producers * tasksPerProducer);

        ExecutorService producerThreads = pool(producers);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> told = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            told.add(producerThreads.submit(() -> {
                start.await();
                for (int seq = 0; seq < tasksPerProducer; seq++) {
                    int[] entry = {producer, seq};
                    assertTrue(mailbox.tell(() -> {
                        if (running.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        log.add(entry);
                        running.decrementAndGet();
                        allRan.countDown();
                    }));
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : told) {
            f.get(1, TimeUnit.MINUTES);
        }
        assertTrue(allRan.await(1, TimeUnit.MINUTES));

        assertEquals(0, overlaps.get(), "tasks of one mailbox ran concurrently");
        assertEquals(producers * tasksPerProducer, log.size());
        int[] next = new int[producers];
        for (int[] entry : log) {
            assertEquals(next[entry[0]], entry[1], "order of producer " + entry[0]);
            next[entry[0]]++;
        }
        assertEquals(0, mailbox.pendingCount());
    }

    @Test
    void manyMailboxesOnOnePoolEachRunSerially() throws Exception {
        int mailboxes = 50;
        int tasksEach = 2_000;
        ExecutorService pool = pool(8);
        CountDownLatch allRan = new CountDownLatch(mailboxes * tasksEach);
        AtomicInteger overlaps = new AtomicInteger();
        int[] counters = new int[mailboxes]; // one plain int per mailbox, written by its tasks only
        List<Mailbox> all = new ArrayList<>();
        for (int m = 0; m < mailboxes; m++) {
            all.add(new Mailbox(pool, "client-" + m));
        }
        AtomicInteger[] running = new AtomicInteger[mailboxes];
        for (int m = 0; m < mailboxes; m++) {
            running[m] = new AtomicInteger();
        }
        for (int i = 0; i < tasksEach; i++) {
            for (int m = 0; m < mailboxes; m++) {
                int box = m;
                all.get(m).tell(() -> {
                    if (running[box].incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                    }
                    counters[box]++;
                    running[box].decrementAndGet();
                    allRan.countDown();
                });
            }
        }
        assertTrue(allRan.await(1, TimeUnit.MINUTES));
        assertEquals(0, overlaps.get());
        // The pool's threads wrote these; the latch makes their writes visible here.
        for (int m = 0; m < mailboxes; m++) {
            assertEquals(tasksEach, counters[m]);
        }
    }

    @Test
    void aBusyMailboxDoesNotStarveAnotherOnASingleThread() throws Exception {
        ExecutorService singleThread = pool(1);
        Mailbox busy = new Mailbox(singleThread, "busy");
        Mailbox quiet = new Mailbox(singleThread, "quiet");
        AtomicBoolean stop = new AtomicBoolean();
        // Re-tells itself forever: without batching its turn would never end.
        Runnable spin = new Runnable() {
            @Override
            public void run() {
                if (!stop.get()) {
                    busy.tell(this);
                }
            }
        };
        busy.tell(spin);
        CountDownLatch quietRan = new CountDownLatch(1);
        quiet.tell(quietRan::countDown);

        boolean progressed = quietRan.await(30, TimeUnit.SECONDS);
        stop.set(true);
        assertTrue(progressed, "the quiet mailbox never got the thread");
    }

    @Test
    void aTurnRunsAtMostOneBatchThenYields() {
        QueuedExecutor executor = new QueuedExecutor();
        Mailbox mailbox = new Mailbox(executor, "client-1");
        AtomicInteger ran = new AtomicInteger();
        int told = Mailbox.BATCH_SIZE * 2 + 5;
        for (int i = 0; i < told; i++) {
            mailbox.tell(ran::incrementAndGet);
        }
        assertEquals(1, executor.queued(), "one turn for many tells");
        assertEquals(told, mailbox.pendingCount());

        executor.runNext();
        assertEquals(Mailbox.BATCH_SIZE, ran.get());
        assertEquals(1, executor.queued(), "the rest waits for its next turn");
        assertEquals(told - Mailbox.BATCH_SIZE, mailbox.pendingCount());

        executor.runAll();
        assertEquals(told, ran.get());
        assertEquals(0, mailbox.pendingCount());
        assertEquals(0, executor.queued());
    }

    @Test
    void theEndOfTurnStepRunsOnceAfterEachTurnsTasks() {
        QueuedExecutor executor = new QueuedExecutor();
        List<String> ran = new ArrayList<>();
        Mailbox mailbox = new Mailbox(executor, "client-1", () -> ran.add("end"));
        for (int i = 0; i < Mailbox.BATCH_SIZE + 1; i++) {
            mailbox.tell(() -> ran.add("task"));
        }

        executor.runNext();
        assertEquals(Mailbox.BATCH_SIZE + 1, ran.size());
        assertEquals("end", ran.get(Mailbox.BATCH_SIZE), "after the first turn's tasks");

        executor.runAll();
        assertEquals(List.of("task", "end"), ran.subList(Mailbox.BATCH_SIZE + 1, ran.size()));
    }

    @Test
    void aTaskToldByTheEndOfTurnStepWaitsForTheNextTurn() {
        QueuedExecutor executor = new QueuedExecutor();
        List<String> ran = new ArrayList<>();
        AtomicBoolean toldOnce = new AtomicBoolean();
        Mailbox[] self = new Mailbox[1];
        self[0] = new Mailbox(executor, "client-1", () -> {
            ran.add("end");
            if (toldOnce.compareAndSet(false, true)) {
                self[0].tell(() -> ran.add("next"));
            }
        });
        self[0].tell(() -> ran.add("first"));

        executor.runNext();
        assertEquals(List.of("first", "end"), ran);
        assertEquals(1, executor.queued(), "a turn of its own for the task told at the end");

        executor.runAll();
        assertEquals(List.of("first", "end", "next", "end"), ran);
    }

    @Test
    void aFailingEndOfTurnStepIsLoggedAndTheMailboxGoesOn() {
        QueuedExecutor executor = new QueuedExecutor();
        List<String> ran = new ArrayList<>();
        Mailbox mailbox = new Mailbox(executor, "client-1", () -> {
            throw new IllegalStateException("flush failed");
        });
        mailbox.tell(() -> ran.add("first"));
        executor.runAll();
        mailbox.tell(() -> ran.add("second"));
        executor.runAll();
        assertEquals(List.of("first", "second"), ran);
    }

    @Test
    void aFailingTaskIsLoggedWithTheMailboxNameAndTheNextOneRuns() {
        Logger logger = (Logger) LoggerFactory.getLogger(Mailbox.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            QueuedExecutor executor = new QueuedExecutor();
            Mailbox mailbox = new Mailbox(executor, "client-42");
            AtomicBoolean nextRan = new AtomicBoolean();
            mailbox.tell(() -> {
                throw new IllegalStateException("bad packet");
            });
            mailbox.tell(() -> nextRan.set(true));
            executor.runAll();

            assertTrue(nextRan.get());
            assertEquals(1, appender.list.size());
            ILoggingEvent event = appender.list.get(0);
            assertEquals(Level.WARN, event.getLevel());
            assertTrue(event.getFormattedMessage().contains("client-42"), event.getFormattedMessage());
            assertEquals("bad packet", event.getThrowableProxy().getMessage());
        } finally {
            logger.detachAppender(appender);
        }
    }

    @Test
    void anErrorEscapesButTheMailboxKeepsItsRemainingTasksScheduled() {
        QueuedExecutor executor = new QueuedExecutor();
        Mailbox mailbox = new Mailbox(executor, "client-1");
        AtomicBoolean nextRan = new AtomicBoolean();
        mailbox.tell(() -> {
            throw new Error("fatal");
        });
        mailbox.tell(() -> nextRan.set(true));

        assertThrows(Error.class, executor::runNext);
        assertEquals(1, executor.queued(), "a new turn for the task after the Error");
        executor.runAll();
        assertTrue(nextRan.get());
    }

    @Test
    void closeRejectsAndCountsLaterTellsButRunsEarlierOnes() {
        QueuedExecutor executor = new QueuedExecutor();
        Mailbox mailbox = new Mailbox(executor, "client-1");
        List<String> ran = new ArrayList<>();
        assertTrue(mailbox.tell(() -> ran.add("before")));
        mailbox.close();
        assertTrue(mailbox.isClosed());
        assertFalse(mailbox.tell(() -> ran.add("after")));
        assertFalse(mailbox.tell(() -> ran.add("after again")));

        executor.runAll();
        assertEquals(List.of("before"), ran);
        assertEquals(2, mailbox.rejectedCount());
        assertEquals(0, mailbox.pendingCount());
    }

    @Test
    void aRejectedTurnIsRetriedByTheNextTell() {
        QueuedExecutor executor = new QueuedExecutor();
        Mailbox mailbox = new Mailbox(executor, "client-1");
        List<String> ran = new ArrayList<>();
        executor.rejecting(true);
        assertThrows(RejectedExecutionException.class, () -> mailbox.tell(() -> ran.add("first")));
        assertEquals(1, mailbox.pendingCount(), "the task stays queued");

        executor.rejecting(false);
        assertTrue(mailbox.tell(() -> ran.add("second")));
        executor.runAll();
        assertEquals(List.of("first", "second"), ran);
    }
}
