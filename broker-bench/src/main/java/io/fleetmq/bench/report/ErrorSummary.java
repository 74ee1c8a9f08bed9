package io.fleetmq.bench.report;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Error counts by kind plus the first few messages, so a report shows both how many and what.
 *
 * @param counts  every kind, zero included
 * @param samples the first messages in the order they happened
 */
public record ErrorSummary(Map<ErrorKind, Long> counts, List<String> samples) {

    public ErrorSummary {
        EnumMap<ErrorKind, Long> all = new EnumMap<>(ErrorKind.class);
        for (ErrorKind kind : ErrorKind.values()) {
            all.put(kind, counts.getOrDefault(kind, 0L));
        }
        counts = Map.copyOf(all);
        samples = List.copyOf(samples);
    }

    public long count(ErrorKind kind) {
        return counts.get(kind);
    }

    public long total() {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }
}
