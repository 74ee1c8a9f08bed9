package io.fleetmq.core.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PublishRateTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void aBurstUpToOneSecondOfTheRateIsFree() {
        PublishRate rate = new PublishRate(10, 0, 0);
        for (int i = 0; i < 10; i++) {
            assertEquals(0, rate.take(100, 0), "message " + i + " of the burst");
        }
        assertEquals(SECOND / 10, rate.take(100, 0), "the 11th owes a tenth of a second");
        assertEquals(2 * SECOND / 10, rate.take(100, 0), "the 12th two tenths");
    }

    @Test
    void theDebtIsPaidByTimeAndTheBucketRefillsNoFurtherThanOneSecond() {
        PublishRate rate = new PublishRate(10, 0, 0);
        for (int i = 0; i < 12; i++) {
            rate.take(1, 0);
        }
        assertEquals(0, rate.take(1, 3 * SECOND / 10), "0.3 s pays the 0.2 s owed and the next message");
        // A long pause fills the bucket to one second of rate, not more.
        for (int i = 0; i < 10; i++) {
            assertEquals(0, rate.take(1, 100 * SECOND), "message " + i + " after a pause");
        }
        assertTrue(rate.take(1, 100 * SECOND) > 0, "the 11th after the pause waits");
    }

    @Test
    void bytesAreLimitedOnTheirOwn() {
        PublishRate rate = new PublishRate(0, 1000, 0);
        assertEquals(0, rate.take(1000, 0));
        assertEquals(SECOND / 2, rate.take(500, 0), "500 bytes beyond 1000 B/s owe half a second");
        assertEquals(0, rate.take(0, SECOND / 2 + SECOND / 2), "paid, and the bucket refilled");
    }

    @Test
    void theSlowerOfTheTwoRatesDecides() {
        PublishRate rate = new PublishRate(1000, 100, 0);
        rate.take(100, 0);
        assertEquals(SECOND, rate.take(100, 0), "bytes owe a second, messages nothing");
    }

    @Test
    void zeroMeansNoLimit() {
        PublishRate rate = new PublishRate(0, 0, 0);
        assertFalse(rate.limited());
        for (int i = 0; i < 1_000_000; i++) {
            assertEquals(0, rate.take(Integer.MAX_VALUE, 0));
        }
        assertThrows(IllegalArgumentException.class, () -> new PublishRate(-1, 0, 0));
    }

    @Test
    void hugeValuesDoNotOverflow() {
        PublishRate rate = new PublishRate(Long.MAX_VALUE / 2, Long.MAX_VALUE / 2, 0);
        assertEquals(0, rate.take(Long.MAX_VALUE, Long.MAX_VALUE));
        PublishRate slow = new PublishRate(1, 1, 0);
        assertTrue(slow.take(Long.MAX_VALUE, 0) > 0);
        assertTrue(slow.take(Long.MAX_VALUE, 0) > 0, "a debt at the floor stays a debt");
    }
}
