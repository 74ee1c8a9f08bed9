package io.fleetmq.bench.probe;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/**
 * Every connection is a file descriptor, in the generator and in the broker. A run that hits the
 * limit half-way fails with "Too many open files" errors that look like a broker problem, so the
 * idle and storm scenarios check the limit before opening anything.
 */
public final class FileLimit {

    /** Descriptors beyond the connections: the JVM's jars, epoll and event fds, the metrics client. */
    public static final int HEADROOM = 1000;

    private FileLimit() {
    }

    /**
     * The limit this JVM runs under (HotSpot raises the soft limit to the hard one at start), or -1 when
     * the platform does not tell.
     */
    public static long current() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            return unix.getMaxFileDescriptorCount();
        }
        return -1;
    }

    /** Null when {@code limit} is enough for {@code connections}; otherwise what to tell the user. */
    public static String problem(long limit, int connections) {
        long needed = (long) connections + HEADROOM;
        if (limit < 0 || limit >= needed) {
            return null;
        }
        return String.format(java.util.Locale.ROOT,
                "the open-file limit is %d, but %d connections need at least %d: raise it first,"
                        + " e.g. 'ulimit -n 1048576' in this shell (as root, or up to the hard limit 'ulimit -Hn'),"
                        + " and the broker's too if it runs on this machine",
                limit, connections, needed);
    }
}
