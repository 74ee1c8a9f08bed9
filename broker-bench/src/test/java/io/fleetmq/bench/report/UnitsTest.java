package io.fleetmq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class UnitsTest {

    @Test
    void durationsPickTheUnitThatKeepsThreeFigures() {
        assertEquals("850 ns", Units.duration(850));
        assertEquals("1 µs", Units.duration(1_000));
        assertEquals("412 µs", Units.duration(412_345));
        assertEquals("1.00 ms", Units.duration(999_999));
        assertEquals("3.42 ms", Units.duration(3_420_000));
        assertEquals("1.25 s", Units.duration(1_250_000_000L));
    }

    @Test
    void countsAreGroupedTheSameEverywhere() {
        assertEquals("1,234,567", Units.count(1_234_567));
        assertEquals("-12", Units.count(-12));
        assertEquals("51,235", Units.count(51_234.6));
    }
}
