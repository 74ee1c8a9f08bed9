package io.fleetmq.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class AwaitTest {

    @Test
    void returnsAsSoonAsTheConditionHolds() {
        AtomicInteger checks = new AtomicInteger();

        Await.until(Duration.ofSeconds(10), "the third check", () -> checks.incrementAndGet() == 3);

        assertEquals(3, checks.get());
    }

    @Test
    void failsWithTheDescriptionOnTimeout() {
        AssertionError failure = assertThrows(AssertionError.class,
                () -> Await.until(Duration.ofMillis(50), "pigs fly", () -> false));

        assertTrue(failure.getMessage().contains("pigs fly"), failure.getMessage());
    }

    @Test
    void keepsTheLastExceptionOfTheConditionAsCause() {
        IllegalStateException notReady = new IllegalStateException("connection refused");

        AssertionError failure = assertThrows(AssertionError.class,
                () -> Await.until(Duration.ofMillis(50), "the server answers", () -> {
                    throw notReady;
                }));

        assertSame(notReady, failure.getCause());
    }
}
