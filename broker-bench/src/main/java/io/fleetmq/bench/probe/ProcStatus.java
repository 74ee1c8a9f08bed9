package io.fleetmq.bench.probe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Resident memory of any process on this machine from {@code /proc/PID/status}: works for a JVM and
 * for Mosquitto alike, and needs no agent in the broker.
 */
public final class ProcStatus {

    private ProcStatus() {
    }

    /** VmRSS in bytes, or {@link ResourceSample#UNKNOWN} when the process is gone or this is not Linux. */
    public static long rssBytes(long pid) {
        String status;
        try {
            status = Files.readString(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return ResourceSample.UNKNOWN;
        }
        return vmRss(status);
    }

    /** The {@code VmRSS:   123456 kB} line of a status file, in bytes. */
    static long vmRss(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("VmRSS:")) {
                String[] parts = line.substring("VmRSS:".length()).trim().split("\\s+");
                try {
                    long value = Long.parseLong(parts[0]);
                    return parts.length > 1 && parts[1].equalsIgnoreCase("kB") ? value * 1024 : value;
                } catch (NumberFormatException e) {
                    return ResourceSample.UNKNOWN;
                }
            }
        }
        return ResourceSample.UNKNOWN; // kernel threads and zombies have no VmRSS line
    }
}
