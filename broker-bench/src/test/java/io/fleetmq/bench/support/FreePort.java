package io.fleetmq.bench.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** A TCP port on loopback that was free a moment ago; good enough for a server the test starts next. */
public final class FreePort {

    private FreePort() {
    }

    public static int next() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot bind a free port on loopback", e);
        }
    }
}
