package io.fleetmq.core.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ActorTimersTest {

    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
    private final ActorTimers timers = new ActorTimers(scheduler);
    private final ExecutorService actorPool = Executors.newSingleThreadExecutor(r -> new Thread(r, "actor-pool"));

    @AfterEach
    void shutDown() throws InterruptedException {
        scheduler.shutdownNow();
        actorPool.shutdownNow();
        assertTrue(scheduler.awaitTermination(10, TimeUnit.SECONDS));
        assertTrue(actorPool.awaitTermination(10, TimeUnit.SECONDS));
    }

    /**
     * Waits until the scheduler has run everything due now: it runs tasks due at the same time in
     * the order they were scheduled, so a task scheduled after a zero-delay timer runs after it.
     */
    private void schedulerCatchesUp() throws Exception {
        scheduler.submit(() -> { }).get(10, TimeUnit.SECONDS);
    }

    @Test
    void theTaskRunsInsideTheMailbox() throws Exception {
        Mailbox mailbox = new Mailbox(actorPool, "client-1");
        AtomicReference<String> thread = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        timers.schedule(mailbox, Duration.ofMillis(5), () -> {
            thread.set(Thread.currentThread().getName());
            ran.countDown();
        });
        assertTrue(ran.await(10, TimeUnit.SECONDS));
        assertEquals("actor-pool", thread.get());
    }

    @Test
    void cancelBeforeItFiresRemovesIt() {
        scheduler.setRemoveOnCancelPolicy(true);
        Mailbox mailbox = new Mailbox(actorPool, "client-1");
        ActorTimers.Timer timer = timers.schedule(mailbox, Duration.ofHours(1), () -> { });
        assertEquals(1, scheduler.getQueue().size());
        assertTrue(timer.cancel());
        assertTrue(timer.cancel(), "cancelling twice still says it will not run");
        assertEquals(0, scheduler.getQueue().size());
    }

    @Test
    void cancelAfterHandOverButBeforeTheMailboxRanItStillPreventsIt() throws Exception {
        QueuedExecutor executor = new QueuedExecutor();
        Mailbox mailbox = new Mailbox(executor, "client-1");
        AtomicBoolean ran = new AtomicBoolean();
        ActorTimers.Timer timer = timers.schedule(mailbox, Duration.ZERO, () -> ran.set(true));
        schedulerCatchesUp();
        assertEquals(1, mailbox.pendingCount(), "handed over to the mailbox");

        assertTrue(timer.cancel());
        executor.runAll();
        assertFalse(ran.get());
    }

    @Test
    void cancelAfterItRanReturnsFalse() throws Exception {
        QueuedExecutor executor = new QueuedExecutor();
        Mailbox mailbox = new Mailbox(executor, "client-1");
        AtomicBoolean ran = new AtomicBoolean();
        ActorTimers.Timer timer = timers.schedule(mailbox, Duration.ZERO, () -> ran.set(true));
        schedulerCatchesUp();
        executor.runAll();

        assertTrue(ran.get());
        assertFalse(timer.cancel());
    }

    @Test
    void aTimerForAClosedMailboxIsDroppedAndCounted() throws Exception {
        QueuedExecutor executor = new QueuedExecutor();
        Mailbox mailbox = new Mailbox(executor, "client-1");
        mailbox.close();
        timers.schedule(mailbox, Duration.ZERO, () -> { });
        schedulerCatchesUp();
        assertEquals(1, mailbox.rejectedCount());
        assertEquals(0, executor.queued());
    }
}
