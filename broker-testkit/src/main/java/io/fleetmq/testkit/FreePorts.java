package io.fleetmq.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * Free TCP ports on 127.0.0.1 for tests that must know a port before starting a server.
 *
 * <p>A port is free when handed out, not reserved: another process may take it before the test binds it. Within
 * one JVM no port is handed out twice, so two servers of the same test never collide with each other.
 */
public final class FreePorts {

    private static final Set<Integer> handedOut = new HashSet<>();
    private static final int MAX_ATTEMPTS = 100;

    private FreePorts() {
    }

    public static synchronized int next() {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            int port = probe();
            if (handedOut.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no unused free port after " + MAX_ATTEMPTS + " attempts");
    }

    private static int probe() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot bind a free port on loopback", e);
        }
    }
}
