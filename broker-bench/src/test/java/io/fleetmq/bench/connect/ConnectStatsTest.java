package io.fleetmq.bench.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.run.Phases;
import java.time.Duration;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** Which handshakes count: the CONNACK's arrival decides membership in the window; refusals count by code. */
class ConnectStatsTest {

    private final ConnectStats stats = new ConnectStats();

    @Test
    void nothingIsMeasuredBeforeTheClockStarts() {
        stats.connAck(0, 100, 200);
        stats.connAck(0x86, 100, 200);
        assertEquals(1, stats.acceptedTotal());
        assertEquals(1, stats.refusedTotal());
        assertEquals(0, stats.acceptedMeasured());
        assertEquals(Map.of(), stats.refusedMeasured());
        assertEquals(0, stats.takeAcceptedLatency().getTotalCount());
    }

    @Test
    void connAcksArrivingInTheWindowCountWithTheirLatencyWheneverTheConnectWasSent() {
        stats.begin(Phases.startingAt(0, Duration.ofNanos(1_000), Duration.ofNanos(1_000)));
        stats.connAck(0, 400, 900);       // warm-up: totals only
        stats.connAck(0, 900, 1_100);     // sent in warm-up, answered in the window: counts
        stats.connAck(0, 1_200, 1_500);
        stats.connAck(0x86, 1_300, 1_350);
        stats.connAck(0x86, 1_400, 1_450);
        stats.connAck(0x87, 1_500, 1_600);
        stats.connAck(0, 1_900, 2_000);   // answered after the window: totals only

        assertEquals(4, stats.acceptedTotal());
        assertEquals(3, stats.refusedTotal());
        assertEquals(2, stats.acceptedMeasured());
        assertEquals(Map.of(0x86, 2L, 0x87, 1L), stats.refusedMeasured());
        Histogram accepted = stats.takeAcceptedLatency();
        assertEquals(2, accepted.getTotalCount());
        assertEquals(200, accepted.getMinValue());
        assertEquals(300, accepted.getMaxValue());
        Histogram refused = stats.takeRefusedLatency();
        assertEquals(3, refused.getTotalCount());
        assertEquals(100, refused.getMaxValue());
    }

    @Test
    void threePointOneOneReturnCodesAreRefusalsToo() {
        stats.begin(Phases.startingAt(0, Duration.ZERO, Duration.ofSeconds(1)));
        stats.connAck(4, 0, 10);
        stats.connAck(5, 0, 10);
        assertEquals(Map.of(4, 1L, 5, 1L), stats.refusedMeasured());
        assertEquals(0, stats.acceptedMeasured());
    }

    @Test
    void handshakesWithoutConnAckAreErrorsNotRefusals() {
        stats.begin(Phases.startingAt(0, Duration.ZERO, Duration.ofSeconds(1)));
        stats.error(ErrorKind.CONNECT_FAILED, "c0: no CONNACK within 10 s");
        assertEquals(1, stats.errors().summary().count(ErrorKind.CONNECT_FAILED));
        assertEquals(0, stats.refusedTotal());
    }

    @Test
    void aCodeThatIsNotOneByteIsAProgrammingError() {
        assertThrows(IllegalArgumentException.class, () -> stats.connAck(256, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> stats.connAck(-1, 0, 1));
    }
}
