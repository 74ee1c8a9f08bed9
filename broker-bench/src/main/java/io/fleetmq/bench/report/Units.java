package io.fleetmq.bench.report;

import java.util.Locale;

/** Number formatting shared by the table and the JSON line; Locale.ROOT so output never varies by machine. */
final class Units {

    private Units() {
    }

    /** {@code 812 µs}, {@code 3.42 ms}, {@code 1.20 s}: three significant figures is all a histogram holds. */
    static String duration(long nanos) {
        // Thresholds sit where rounding would carry into the next unit: 999,600 ns is "1.00 ms", not "1000 µs".
        if (nanos < 1_000) {
            return nanos + " ns";
        }
        if (nanos < 999_500) {
            return String.format(Locale.ROOT, "%.0f µs", nanos / 1e3);
        }
        if (nanos < 999_995_000) {
            return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
        }
        return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }

    static String duration(double nanos) {
        return duration(Math.round(nanos));
    }

    /**
     * {@code 812 B}, {@code 4.2 KiB}, {@code 512.0 MiB}, {@code 1.50 GiB}; negative values keep their sign
     * (memory may shrink between two samples), NaN (unknown) is {@code n/a}.
     */
    static String bytes(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        double abs = Math.abs(value);
        if (abs < 1024) {
            return String.format(Locale.ROOT, "%.0f B", value);
        }
        if (abs < 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", value / 1024);
        }
        if (abs < 1024L * 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f MiB", value / (1024 * 1024));
        }
        return String.format(Locale.ROOT, "%.2f GiB", value / (1024L * 1024 * 1024));
    }

    /** {@link #bytes(double)} of a sampled figure; negative means unknown. */
    static String sampledBytes(long value) {
        return value < 0 ? "n/a" : bytes((double) value);
    }

    /** {@code 1,234,567}. */
    static String count(long value) {
        return String.format(Locale.ROOT, "%,d", value);
    }

    static String count(double value) {
        return count(Math.round(value));
    }
}
