package io.fleetmq.bench.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Where a storm's devices reconnect: a dropped port's devices spread over the others. */
class FleetClientPortsTest {

    /** How many of the devices that started on {@code port} go where after a drop. */
    private static Map<Integer, Integer> afterDrop(int devices, int ports, int port) {
        Map<Integer, Integer> to = new TreeMap<>();
        for (int i = 0; i < devices; i++) {
            if (i % ports == port) {
                to.merge(FleetClient.nextPort(i, port, ports, true), 1, Integer::sum);
            }
        }
        return to;
    }

    @Test
    void aDroppedPortsDevicesSpreadEvenlyOverTheOthers() {
        assertEquals(Map.of(0, 1000, 1, 1000, 2, 1000), afterDrop(12_000, 4, 3));
        assertEquals(Map.of(0, 1000, 2, 1000, 3, 1000), afterDrop(12_000, 4, 1));
        assertEquals(Map.of(0, 1500, 1, 1500), afterDrop(9_000, 3, 2));
        assertEquals(Map.of(1, 4500), afterDrop(9_000, 2, 0), "two ports: the other one");
    }

    @Test
    void aFailedAttemptMovesToTheNextPortSoEveryPortIsTried() {
        int at = 3;
        StringBuilder tried = new StringBuilder();
        for (int attempt = 0; attempt < 4; attempt++) {
            at = FleetClient.nextPort(7, at, 4, false);
            tried.append(at);
        }
        assertEquals("0123", tried.toString());
        assertEquals(0, FleetClient.nextPort(5, 0, 1, true), "one port: the same one");
    }
}
