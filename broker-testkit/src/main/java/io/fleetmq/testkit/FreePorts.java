package io.fleetmq.testkit;

import io.fleetmq.embedded.PortPicker;
import java.net.InetAddress;

/**
 * Free TCP ports on 127.0.0.1 for tests that must know a port before starting a server.
 *
 * <p>A port is free when handed out, not reserved. It comes from below the kernel's ephemeral
 * range, so no outgoing connection can take it meanwhile; within one JVM no port is handed out
 * twice, so two servers of the same test never collide with each other.
 */
public final class FreePorts {

    private FreePorts() {
    }

    public static int next() {
        return PortPicker.pick(InetAddress.getLoopbackAddress());
    }

    /** The first of {@code count} consecutive free ports. */
    public static int range(int count) {
        return PortPicker.pickRange(InetAddress.getLoopbackAddress(), count);
    }
}
