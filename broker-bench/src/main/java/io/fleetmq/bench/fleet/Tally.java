package io.fleetmq.bench.fleet;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts by reason text, written from every event loop. The reasons are a handful of fixed texts, so
 * the map stays small however many connections fail.
 */
final class Tally {

    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

    void add(String reason) {
        counts.computeIfAbsent(reason, r -> new LongAdder()).increment();
    }

    Map<String, Long> snapshot() {
        Map<String, Long> copy = new HashMap<>();
        counts.forEach((reason, n) -> copy.put(reason, n.sum()));
        return copy;
    }
}
