package io.fleetmq.bench.run;

import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.report.ErrorSummary;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Thread-safe error tally, written from every event loop. Keeps the first {@value #SAMPLES} messages. */
public final class Errors {

    static final int SAMPLES = 20;

    private final Map<ErrorKind, LongAdder> counts = new EnumMap<>(ErrorKind.class);
    private final List<String> samples = new ArrayList<>();

    public Errors() {
        for (ErrorKind kind : ErrorKind.values()) {
            counts.put(kind, new LongAdder());
        }
    }

    public void record(ErrorKind kind, String message) {
        counts.get(kind).increment();
        synchronized (samples) {
            if (samples.size() < SAMPLES) {
                samples.add(kind.label() + ": " + message);
            }
        }
    }

    public long total() {
        return counts.values().stream().mapToLong(LongAdder::sum).sum();
    }

    public ErrorSummary summary() {
        Map<ErrorKind, Long> snapshot = new EnumMap<>(ErrorKind.class);
        counts.forEach((kind, adder) -> snapshot.put(kind, adder.sum()));
        synchronized (samples) {
            return new ErrorSummary(snapshot, samples);
        }
    }
}
