package io.fleetmq.core.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class ReadinessTest {

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
    void describeReturnsTheInnermostMessage() {
        Exception e = new RuntimeException("outer", new IllegalStateException("Connection refused"));
        assertEquals("Connection refused", HealthStatus.describe(e));
    }
}
