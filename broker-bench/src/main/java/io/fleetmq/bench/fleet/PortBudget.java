package io.fleetmq.bench.fleet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Whether the kernel has enough ephemeral ports for the fleet. A TCP connection needs a unique
 * (source address, source port, broker address, broker port); with one source address and one broker
 * port, that leaves one connection per ephemeral port, about 28,000 with Linux's default range.
 */
final class PortBudget {

    private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int LINUX_DEFAULT = 60_999 - 32_768 + 1;

    private PortBudget() {
    }

    /** The size of the ephemeral port range, or Linux's default when it cannot be read. */
    static int ephemeralPorts() {
        try {
            String[] range = Files.readString(RANGE).trim().split("\\s+");
            return Integer.parseInt(range[1]) - Integer.parseInt(range[0]) + 1;
        } catch (IOException | RuntimeException e) {
            return LINUX_DEFAULT;
        }
    }

    /**
     * Null when the fleet fits, otherwise a warning. With epoll the kernel picks the port per
     * destination (IP_BIND_ADDRESS_NO_PORT), so each pair of source address and broker port has the
     * whole range; otherwise each source address has it once for all broker ports.
     */
    static String warning(int clients, int sources, int ports, boolean perDestination, int ephemeral) {
        long pairs = sources == 0 ? ports : perDestination ? (long) sources * ports : sources;
        long perPair = (clients + pairs - 1) / pairs;
        if (perPair <= ephemeral) {
            return null;
        }
        long neededSources = ((long) clients + (long) ephemeral * (perDestination ? ports : 1) - 1)
                / ((long) ephemeral * (perDestination ? ports : 1));
        return String.format(Locale.ROOT, "warning: %,d connections over %d source address(es) and %d port(s) need"
                        + " %,d ephemeral ports per pair, but the kernel has %,d: connects will fail with"
                        + " 'Cannot assign requested address'; give --source-addresses with at least %d addresses,"
                        + " e.g. 127.0.0.1-127.0.0.%d",
                clients, Math.max(1, sources), ports, perPair, ephemeral, neededSources, Math.min(254, neededSources));
    }
}
