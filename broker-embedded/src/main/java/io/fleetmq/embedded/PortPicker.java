package io.fleetmq.embedded;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks a free port for a server that must know its port before it binds (Kafka advertises it,
 * tests pass it on). The port is taken from below the kernel's ephemeral range: a port the kernel
 * hands out for port 0 is from that range, and so is the local port of every outgoing connection,
 * which could take a port between the pick and the bind. Below the range only a server binding it
 * explicitly can take it. Within one JVM no port is handed out twice.
 */
public final class PortPicker {

    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int LOWEST = 10_000;
    private static final int DEFAULT_EPHEMERAL_START = 32_768;
    private static final int MAX_ATTEMPTS = 200;
    private static final Set<Integer> handedOut = new HashSet<>();

    private PortPicker() {
    }

    /** A port that {@code address} can bind now and that this JVM has not handed out before. */
    public static synchronized int pick(InetAddress address) {
        int ephemeralStart = ephemeralStart();
        if (ephemeralStart - LOWEST < 1_000) {
            return pickFromKernel(address);
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            int port = random.nextInt(LOWEST, ephemeralStart);
            if (!handedOut.contains(port) && bindable(address, port)) {
                handedOut.add(port);
                return port;
            }
        }
        throw new IllegalStateException("no free port in " + LOWEST + ".." + (ephemeralStart - 1) + " after "
                + MAX_ATTEMPTS + " attempts");
    }

    /**
     * The first of {@code count} consecutive ports that {@code address} can bind now, none handed out
     * before, for servers that derive their ports from one base.
     */
    public static synchronized int pickRange(InetAddress address, int count) {
        int ephemeralStart = ephemeralStart();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            int base = random.nextInt(LOWEST, Math.max(LOWEST + 1, ephemeralStart - count));
            boolean free = true;
            for (int p = base; p < base + count && free; p++) {
                free = !handedOut.contains(p) && bindable(address, p);
            }
            if (free) {
                for (int p = base; p < base + count; p++) {
                    handedOut.add(p);
                }
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free ports after " + MAX_ATTEMPTS + " attempts");
    }

    private static int pickFromKernel(InetAddress address) {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(address, 0));
                if (handedOut.add(socket.getLocalPort())) {
                    return socket.getLocalPort();
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot bind a free port on " + address + ": " + e.getMessage(), e);
            }
        }
        throw new IllegalStateException("no unused free port after " + MAX_ATTEMPTS + " attempts");
    }

    private static boolean bindable(InetAddress address, int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(address, port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The first port of the kernel's ephemeral range (Linux), or the common default elsewhere. */
    private static int ephemeralStart() {
        // Read line-wise: /proc files report a size of 0, and a whole-file read can come back short.
        try (java.io.BufferedReader reader = Files.newBufferedReader(EPHEMERAL_RANGE)) {
            String line = reader.readLine();
            return Integer.parseInt(line.trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_START;
        }
    }
}
