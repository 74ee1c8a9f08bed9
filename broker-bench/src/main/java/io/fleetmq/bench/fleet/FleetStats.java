package io.fleetmq.bench.fleet;

import io.fleetmq.bench.report.FailureKind;
import io.fleetmq.bench.report.FleetCounts;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of one phase of a fleet run, written concurrently from every event loop (LongAdder and
 * atomic arrays: no lock on the per-connection path but the samples list, which fills once).
 */
final class FleetStats {

    static final int SAMPLES = 20;
    private static final int CODES = 256;

    final LongAdder attempts = new LongAdder();
    final LongAdder accepted = new LongAdder();
    final LongAdder served = new LongAdder();
    final LongAdder sessionPresent = new LongAdder();
    final LongAdder lost = new LongAdder();
    final LongAdder pings = new LongAdder();
    final LongAdder messages = new LongAdder();
    private final AtomicLongArray refusedByCode = new AtomicLongArray(CODES);
    private final AtomicLongArray failuresByKind = new AtomicLongArray(FailureKind.values().length);
    private final Tally failures = new Tally();
    private final Tally losses = new Tally();
    private final List<String> samples = new ArrayList<>();
    private final boolean sampleLosses;

    /** Idle: a lost connection is news, so it is sampled with the failures. */
    FleetStats() {
        this(true);
    }

    /** @param sampleLosses false in a storm, where drops are the point and would crowd out the failures */
    FleetStats(boolean sampleLosses) {
        this.sampleLosses = sampleLosses;
    }

    void failed(String clientId, Failure failure) {
        failuresByKind.incrementAndGet(failure.kind().ordinal());
        if (failure.kind() == FailureKind.CONNACK_REFUSED) {
            refusedByCode.incrementAndGet(failure.code() & 0xFF);
        }
        failures.add(failure.reason());
        sample(clientId + ": " + failure.reason() + (failure.detail().isEmpty() ? "" : " (" + failure.detail() + ")"));
    }

    void lost(String clientId, String reason) {
        lost.increment();
        losses.add(reason);
        if (sampleLosses) {
            sample(clientId + ": lost, " + reason);
        }
    }

    long failures() {
        long n = 0;
        for (int i = 0; i < failuresByKind.length(); i++) {
            n += failuresByKind.get(i);
        }
        return n;
    }

    private void sample(String text) {
        synchronized (samples) {
            if (samples.size() < SAMPLES) {
                samples.add(text);
            }
        }
    }

    FleetCounts snapshot() {
        Map<Integer, Long> refused = new HashMap<>();
        for (int code = 0; code < CODES; code++) {
            if (refusedByCode.get(code) > 0) {
                refused.put(code, refusedByCode.get(code));
            }
        }
        Map<FailureKind, Long> kinds = new EnumMap<>(FailureKind.class);
        for (FailureKind kind : FailureKind.values()) {
            kinds.put(kind, failuresByKind.get(kind.ordinal()));
        }
        List<String> firstSamples;
        synchronized (samples) {
            firstSamples = List.copyOf(samples);
        }
        return new FleetCounts(attempts.sum(), accepted.sum(), served.sum(), sessionPresent.sum(), refused, kinds,
                failures.snapshot(), lost.sum(), losses.snapshot(), pings.sum(), messages.sum(), firstSamples);
    }
}
