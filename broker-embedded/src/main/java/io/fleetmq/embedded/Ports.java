package io.fleetmq.embedded;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;

/** Port and address helpers shared by the embedded services. */
final class Ports {

    private Ports() {
    }

    /** Replaces each {@code 0} by a free port on {@code host} (see {@link PortPicker} for how it is chosen). */
    static int[] resolve(String service, String host, int... requested) {
        InetAddress address = address(service, host);
        int[] resolved = requested.clone();
        for (int i = 0; i < resolved.length; i++) {
            if (resolved[i] == 0) {
                try {
                    resolved[i] = PortPicker.pick(address);
                } catch (IllegalStateException e) {
                    throw EmbeddedServiceException.of(service, e.getMessage(), e);
                }
            }
        }
        return resolved;
    }

    /**
     * Resolves the zeros of {@code requested} to free ports and checks every port is free now. A
     * port picked here that is taken by the time it is checked is picked again (a few times):
     * nobody asked for that port, so there is no reason to fail. A port the caller named is
     * checked once and reported if taken.
     */
    static int[] resolveFree(String service, String host, int... requested) {
        for (int attempt = 1; ; attempt++) {
            int[] resolved = resolve(service, host, requested);
            boolean allFree = true;
            for (int i = 0; i < resolved.length && allFree; i++) {
                try {
                    requireFree(service, host, resolved[i]);
                } catch (EmbeddedServiceException taken) {
                    if (requested[i] != 0 || attempt == 5) {
                        throw taken;
                    }
                    allFree = false;
                }
            }
            if (allFree) {
                return resolved;
            }
        }
    }

    /**
     * Fails fast with a clear message when something already listens on the port. The services would fail too,
     * but Kafka, Redis and PostgreSQL each report it differently and some only in their own log.
     */
    static void requireFree(String service, String host, int port) {
        InetAddress address = address(service, host);
        try (ServerSocket socket = new ServerSocket()) {
            // Same option the services use, so a port lingering in TIME_WAIT is not reported as taken.
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(address, port));
        } catch (BindException e) {
            throw portInUse(service, host, port, e);
        } catch (IOException e) {
            throw EmbeddedServiceException.of(service, "cannot bind port " + port + " on " + host + ": " + e.getMessage(), e);
        }
    }

    static EmbeddedServiceException portInUse(String service, String host, int port, Throwable cause) {
        return EmbeddedServiceException.of(service, "port " + port + " on " + host + " is already in use", cause);
    }

    /** The address clients should use: a wildcard bind is reachable on loopback, anything else as given. */
    static String connectHost(String host) {
        return isWildcard(host) ? "127.0.0.1" : host;
    }

    static boolean isWildcard(String host) {
        return "0.0.0.0".equals(host) || "::".equals(host) || "[::]".equals(host);
    }

    static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** {@code host:port} with IPv6 literals in brackets, as URLs and Kafka listeners need. */
    static String hostPort(String host, int port) {
        boolean ipv6Literal = host.indexOf(':') >= 0 && !host.startsWith("[");
        return (ipv6Literal ? "[" + host + "]" : host) + ":" + port;
    }

    private static InetAddress address(String service, String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw EmbeddedServiceException.of(service, "unknown host " + host, e);
        }
    }

}
