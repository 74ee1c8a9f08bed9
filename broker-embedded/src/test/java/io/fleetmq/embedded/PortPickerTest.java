package io.fleetmq.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PortPickerTest {

    @Test
    void picksBindablePortsBelowTheEphemeralRangeAndNeverTheSameTwice() throws Exception {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        int ephemeralStart = 32_768;
        if (Files.isReadable(range)) {
            try (BufferedReader r = Files.newBufferedReader(range)) {
                ephemeralStart = Integer.parseInt(r.readLine().trim().split("\\s+")[0]);
            }
        }
        InetAddress loopback = InetAddress.getLoopbackAddress();
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            int port = PortPicker.pick(loopback);
            assertTrue(seen.add(port), "handed out twice: " + port);
            if (ephemeralStart > 11_000) {
                assertTrue(port < ephemeralStart, port + " is in the ephemeral range from " + ephemeralStart);
            }
            try (ServerSocket s = new ServerSocket(port, 1, loopback)) {
                assertEquals(port, s.getLocalPort());
            }
        }
    }
}
