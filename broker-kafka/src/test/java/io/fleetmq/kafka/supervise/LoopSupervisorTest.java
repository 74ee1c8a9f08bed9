package io.fleetmq.kafka.supervise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.testkit.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.errors.AuthorizationException;
import org.junit.jupiter.api.Test;

/** Restart with backoff and give-up, with a fake loop, a fake clock and a sleeper that only advances it. */
class LoopSupervisorTest {

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final AtomicLong clock = new AtomicLong();
    private final List<Long> pauses = new ArrayList<>();
    private final List<String> gaveUp = new CopyOnWriteArrayList<>();

    private LoopSupervisor supervisor(Duration giveUpAfter) {
        LoopSupervisor s = new LoopSupervisor(meters,
                new LoopSupervisor.Policy(Duration.ofMillis(100), Duration.ofSeconds(10), giveUpAfter),
                clock::get, (pause, stopping) -> {
                    pauses.add(pause.toMillis());
                    clock.addAndGet(pause.toNanos());
                });
        s.onGiveUp((loop, cause) -> gaveUp.add(loop + ": " + cause.getMessage()));
        return s;
    }

    @Test
    void aFailingLoopRestartsWithADoublingBackoffUpToItsMaximumAndThenRunsOn() {
        LoopSupervisor s = supervisor(Duration.ofMinutes(5));
        AtomicInteger attempts = new AtomicInteger();
        boolean stopped = s.run("fake", () -> false, progress -> {
            if (attempts.incrementAndGet() <= 9) {
                throw new IllegalStateException("failure " + attempts.get());
            }
            // the tenth attempt runs until its owner stops it
        });
        assertTrue(stopped);
        assertEquals(10, attempts.get(), "restarted after each failure");
        assertEquals(List.of(100L, 200L, 400L, 800L, 1600L, 3200L, 6400L, 10_000L, 10_000L), pauses);
        assertEquals(9.0, s.restarts("fake"));
        assertTrue(s.healthy());
        assertTrue(s.check().up());
        assertEquals(List.of(), gaveUp);
    }

    @Test
    void progressStartsTheBackoffAndTheGiveUpClockAfresh() {
        LoopSupervisor s = supervisor(Duration.ofSeconds(1));
        AtomicInteger attempts = new AtomicInteger();
        boolean stopped = s.run("fake", () -> false, progress -> {
            int n = attempts.incrementAndGet();
            if (n == 4 || n == 7) {
                progress.made(); // a batch handled, then a new fault
            }
            if (n < 10) {
                throw new IllegalStateException("failure " + n);
            }
        });
        assertTrue(stopped, "0.3 s of failing in a row at most: under the bound of 1 s");
        assertEquals(List.of(100L, 200L, 400L, 100L, 200L, 400L, 100L, 200L, 400L), pauses);
        assertTrue(s.healthy());
    }

    @Test
    void aLoopFailingLongerThanTheBoundGivesUpAndTheSupervisorTurnsUnhealthy() {
        LoopSupervisor s = supervisor(Duration.ofSeconds(30));
        AtomicInteger attempts = new AtomicInteger();
        boolean stopped = s.run("routing", () -> false, progress -> {
            attempts.incrementAndGet();
            throw new IllegalStateException("broken");
        });
        assertFalse(stopped);
        // Pauses 0.1 + 0.2 + ... + 6.4 + 10 + 10 = 32.7 s: the tenth attempt fails past the bound and gives up.
        assertEquals(10, attempts.get());
        assertEquals(List.of("routing: broken"), gaveUp, "told once, with the loop and its cause");
        assertFalse(s.healthy());
        assertFalse(s.check().up());
        assertTrue(s.check().detail().contains("routing"), s.check().detail());
    }

    @Test
    void aFailureRetryingCannotMendGivesUpAtOnce() {
        LoopSupervisor s = supervisor(Duration.ofMinutes(5));
        assertFalse(s.run("inbox", () -> false, progress -> {
            throw new AuthorizationException("not allowed to read node.x");
        }));
        assertFalse(s.run("state", () -> false, progress -> {
            throw new Error("out of something");
        }));
        assertEquals(List.of(), pauses, "no restart");
        assertEquals(0.0, s.restarts("inbox"));
        assertEquals(List.of("inbox: not allowed to read node.x", "state: out of something"), gaveUp);
    }

    @Test
    void aFailureWhileStoppingIsTheClosingNotAFault() {
        LoopSupervisor s = supervisor(Duration.ofMinutes(5));
        AtomicBoolean stopping = new AtomicBoolean();
        assertTrue(s.run("fake", stopping::get, progress -> {
            stopping.set(true);
            throw new IllegalStateException("woken up by close");
        }));
        assertEquals(0.0, s.restarts("fake"));
        assertTrue(s.healthy());
    }

    @Test
    void aLoopThatGaveUpMakesTheNodeUnready() {
        LoopSupervisor s = supervisor(Duration.ofMinutes(5));
        io.fleetmq.core.health.Readiness readiness = new io.fleetmq.core.health.Readiness();
        readiness.register(s);
        readiness.started();
        assertTrue(readiness.evaluate().ready());
        s.run("node-inbox", () -> false, progress -> {
            throw new Error("cannot go on");
        });
        io.fleetmq.core.health.Readiness.Report report = readiness.evaluate();
        assertFalse(report.ready());
        assertFalse(report.checks().get("loops").up());
    }

    @Test
    void aGuardedPeriodicTaskThatThrowsKeepsItsSchedule() {
        LoopSupervisor s = new LoopSupervisor(meters, LoopSupervisor.Policy.defaults());
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1);
        try {
            AtomicInteger runs = new AtomicInteger();
            timers.scheduleAtFixedRate(s.guard("timer", () -> {
                if (runs.incrementAndGet() == 1) {
                    throw new IllegalStateException("first run fails");
                }
            }), 0, 5, TimeUnit.MILLISECONDS);
            // Unguarded, the JDK would cancel the task after its first run.
            Await.until(Duration.ofSeconds(10), "the task to run again after failing", () -> runs.get() >= 3);
            assertEquals(1.0, s.restarts("timer"));
            assertTrue(s.healthy());
        } finally {
            timers.shutdownNow();
        }
    }

    @Test
    void theSupervisedSchedulerGuardsEveryRunnable() {
        LoopSupervisor s = new LoopSupervisor(meters, LoopSupervisor.Policy.defaults());
        SupervisedScheduler timers = new SupervisedScheduler(1, r -> new Thread(r, "test-timer"), s, "timer");
        try {
            AtomicInteger runs = new AtomicInteger();
            timers.scheduleWithFixedDelay(() -> {
                runs.incrementAndGet();
                throw new IllegalStateException("always");
            }, 0, 5, TimeUnit.MILLISECONDS);
            Await.until(Duration.ofSeconds(10), "the task to run again after failing", () -> runs.get() >= 3);
            assertTrue(s.restarts("timer") >= 2, "each failure counted: " + s.restarts("timer"));
        } finally {
            timers.shutdownNow();
        }
    }
}
