package io.fleetmq.core.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ReadinessTest {

    /** Released after each test so hanging checks end with it. */
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger hangingCalls = new AtomicInteger();

    @AfterEach
    void releaseHangingChecks() {
        release.countDown();
    }

    /** A dependency that never answers (until the test ends). */
    private HealthCheck hanging(String name) {
        return new HealthCheck() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public HealthStatus check() {
                hangingCalls.incrementAndGet();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return HealthStatus.up("late");
            }
        };
    }

    private static HealthCheck check(String name, AtomicBoolean up) {
        return new HealthCheck() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public HealthStatus check() {
                return up.get() ? HealthStatus.up("ok") : HealthStatus.down("refused");
            }
        };
    }

    @Test
    void notReadyUntilStartedEvenWhenAllChecksPass() {
        Readiness readiness = new Readiness();
        readiness.register(check("kafka", new AtomicBoolean(true)));
        assertFalse(readiness.evaluate().ready());
        readiness.started();
        assertTrue(readiness.evaluate().ready());
    }

    @Test
    void oneFailingDependencyMakesTheNodeNotReadyAndIsNamed() {
        Readiness readiness = new Readiness();
        AtomicBoolean redisUp = new AtomicBoolean(true);
        readiness.register(check("kafka", new AtomicBoolean(true)));
        readiness.register(check("redis", redisUp));
        readiness.started();
        redisUp.set(false);
        Readiness.Report report = readiness.evaluate();
        assertFalse(report.ready());
        assertFalse(report.checks().get("redis").up());
        assertEquals("refused", report.checks().get("redis").detail());
        assertEquals(List.of("kafka", "redis"), List.copyOf(report.checks().keySet()));
    }

    @Test
    void aCheckThatThrowsCountsAsDown() {
        Readiness readiness = new Readiness();
        readiness.register(new HealthCheck() {
            @Override
            public String name() {
                return "postgres";
            }

            @Override
            public HealthStatus check() {
                throw new IllegalStateException("pool closed");
            }
        });
        readiness.started();
        Readiness.Report report = readiness.evaluate();
        assertFalse(report.ready());
        assertEquals("pool closed", report.checks().get("postgres").detail());
    }

    @Test
    void stoppingIsNeverReady() {
        Readiness readiness = new Readiness();
        readiness.started();
        readiness.stopping();
        assertFalse(readiness.evaluate().ready());
        assertEquals("stopping", readiness.evaluate().phase());
    }

    @Test
    void aDegradableDependencyDownKeepsTheNodeReadyAndSaysDegraded() {
        Readiness readiness = new Readiness();
        AtomicBoolean redisUp = new AtomicBoolean(false);
        AtomicBoolean postgresUp = new AtomicBoolean(false);
        readiness.register(check("kafka", new AtomicBoolean(true)));
        readiness.register(check("postgres", postgresUp), Readiness.Impact.DEGRADES);
        readiness.register(check("redis", redisUp), Readiness.Impact.DEGRADES);
        readiness.started();
        Readiness.Report report = readiness.evaluate();
        assertTrue(report.ready());
        assertTrue(report.isDegraded());
        assertEquals(Set.of("postgres", "redis"), report.degraded());
        assertEquals("refused", report.checks().get("redis").detail());

        postgresUp.set(true);
        redisUp.set(true);
        report = readiness.evaluate();
        assertTrue(report.ready());
        assertFalse(report.isDegraded());
        assertTrue(report.degraded().isEmpty());
    }

    @Test
    void aRequiredDependencyDownStillMakesADegradedNodeNotReady() {
        Readiness readiness = new Readiness();
        readiness.register(check("kafka", new AtomicBoolean(false)));
        readiness.register(check("redis", new AtomicBoolean(false)), Readiness.Impact.DEGRADES);
        readiness.started();
        Readiness.Report report = readiness.evaluate();
        assertFalse(report.ready());
        assertEquals(Set.of("redis"), report.degraded());
    }

    @Test
    void aHangingCheckNeitherBlocksTheOthersNorPilesUpThreads() {
        try (Readiness readiness = new Readiness(Duration.ofMillis(200))) {
            AtomicBoolean kafkaUp = new AtomicBoolean(true);
            readiness.register(check("kafka", kafkaUp));
            readiness.register(hanging("postgres"), Readiness.Impact.DEGRADES);
            readiness.register(check("redis", new AtomicBoolean(true)), Readiness.Impact.DEGRADES);
            readiness.started();
            for (int i = 0; i < 5; i++) {
                // Generous bound: without the timeout, evaluate() would never return.
                Readiness.Report report = assertTimeoutPreemptively(Duration.ofSeconds(20), readiness::evaluate);
                assertTrue(report.ready(), "a hanging degradable check keeps the node ready");
                assertFalse(report.checks().get("postgres").up());
                assertTrue(report.checks().get("postgres").detail().startsWith("no answer within 200 ms"),
                        report.checks().get("postgres").detail());
                assertTrue(report.checks().get("kafka").up());
                assertTrue(report.checks().get("redis").up());
            }
            assertEquals(1, hangingCalls.get(), "the pending probe is reused, not started again");

            // The other checks are still probed afresh on each evaluation.
            kafkaUp.set(false);
            assertFalse(readiness.evaluate().ready());

            // Once it answers, the next evaluation takes that answer and later ones probe again.
            release.countDown();
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                while (!readiness.evaluate().checks().get("postgres").up()) {
                    Thread.onSpinWait();
                }
            });
            assertTrue(hangingCalls.get() >= 1);
        }
    }

    @Test
    void aHangingRequiredCheckMakesTheNodeNotReady() {
        try (Readiness readiness = new Readiness(Duration.ofMillis(100))) {
            readiness.register(hanging("kafka"));
            readiness.started();
            Readiness.Report report = assertTimeoutPreemptively(Duration.ofSeconds(20), readiness::evaluate);
            assertFalse(report.ready());
            assertEquals("no answer within 100 ms", report.checks().get("kafka").detail());
        }
    }

    @Test
    void lastKnownNeverBlocksAndRefreshesInTheBackground() {
        try (Readiness readiness = new Readiness(Duration.ofMillis(100))) {
            AtomicBoolean redisUp = new AtomicBoolean(true);
            readiness.register(check("redis", redisUp), Readiness.Impact.DEGRADES);
            readiness.register(hanging("postgres"), Readiness.Impact.DEGRADES);
            assertTrue(readiness.lastKnown("postgres", Duration.ZERO).isEmpty());
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                while (hangingCalls.get() == 0) {
                    Thread.onSpinWait();
                }
            });
            assertTrue(readiness.lastKnown("postgres", Duration.ZERO).isEmpty());
            assertEquals(1, hangingCalls.get(), "one probe at a time");
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                while (readiness.lastKnown("redis", Duration.ZERO).isEmpty()) {
                    Thread.onSpinWait();
                }
            });
            redisUp.set(false);
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                while (readiness.lastKnown("redis", Duration.ZERO).orElseThrow().up()) {
                    Thread.onSpinWait();
                }
            });
            assertFalse(readiness.lastReport().checks().get("redis").up());
            assertTrue(readiness.lastKnown("nosuch", Duration.ZERO).isEmpty());
        }
    }

    @Test
    void describeReturnsTheInnermostMessage() {
        Exception e = new RuntimeException("outer", new IllegalStateException("Connection refused"));
        assertEquals("Connection refused", HealthStatus.describe(e));
    }
}
