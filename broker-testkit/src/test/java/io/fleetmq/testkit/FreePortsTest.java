package io.fleetmq.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

class FreePortsTest {

    @Test
    void handsOutDistinctPortsThatCanBeBound() throws IOException {
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 20; i++) {
            int port = FreePorts.next();
            ports.add(port);
            try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                assertEquals(port, socket.getLocalPort());
            }
        }
        assertEquals(20, ports.size(), "no port handed out twice");
    }
}
