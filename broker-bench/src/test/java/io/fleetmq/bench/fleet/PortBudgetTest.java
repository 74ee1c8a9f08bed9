package io.fleetmq.bench.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fleetmq.bench.report.FailureKind;
import io.netty.channel.ConnectTimeoutException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

/** Ephemeral ports per source address and broker port, and failure reasons that fold per cause. */
class PortBudgetTest {

    private static final int RANGE = 28_232;

    @Test
    void oneSourceAndOnePortHoldOneRangeOfConnections() {
        assertNull(PortBudget.warning(28_000, 0, 1, true, RANGE));
        String warning = PortBudget.warning(100_000, 0, 1, true, RANGE);
        assertTrue(warning.startsWith("warning: 100,000 connections over 1 source address(es) and 1 port(s) need 100,000"
                + " ephemeral ports per pair, but the kernel has 28,232"), warning);
        assertTrue(warning.endsWith("at least 4 addresses, e.g. 127.0.0.1-127.0.0.4"), warning);
    }

    @Test
    void sourceAddressesAndPortsMultiplyWhenTheKernelPicksThePortPerDestination() {
        assertNull(PortBudget.warning(100_000, 50, 1, true, RANGE));
        assertNull(PortBudget.warning(100_000, 2, 2, true, RANGE), "4 pairs of 25,000");
        // Without IP_BIND_ADDRESS_NO_PORT a bound address reserves its port for every destination.
        assertTrue(PortBudget.warning(100_000, 2, 2, false, RANGE).contains("need 50,000 ephemeral ports"));
    }

    @Test
    void everyPairOfSourceAndPortGetsItsShare() {
        // Device i: port i mod P; with P = S = 2, source i mod S would use only 2 of the 4 pairs.
        int ports = 2;
        int sources = 2;
        int[][] used = new int[ports][sources];
        for (int i = 0; i < 8; i++) {
            used[i % ports][Fleet.sourceOf(i, ports, sources)]++;
        }
        for (int[] row : used) {
            for (int n : row) {
                assertEquals(2, n);
            }
        }
    }

    @Test
    void tcpFailuresFoldIntoOneReasonPerCauseWhateverTheAddress() {
        Failure refused = Link.tcpFailure(new ConnectException(
                "finishConnect(..) failed: Connection refused: /127.0.0.1:1883"));
        assertEquals(FailureKind.TCP_FAILED, refused.kind());
        assertEquals("TCP connect failed: Connection refused", refused.reason());
        assertEquals("TCP connect failed: Connection refused",
                Link.tcpFailure(new ConnectException("Connection refused: localhost/127.0.0.1:1884")).reason());
        assertEquals("TCP connect failed: Connection refused", Link.tcpFailure(new ConnectException(
                "finishConnect(..) failed with error(-111): Connection refused")).reason());
        assertEquals("TCP connect timed out", Link.tcpFailure(new ConnectTimeoutException("connection timed out")).reason());
        assertEquals("TCP connect failed: Cannot assign requested address",
                Link.tcpFailure(new java.net.BindException("bind(..) failed: Cannot assign requested address")).reason());
    }
}
