package io.fleetmq.bench.connect;

import io.fleetmq.bench.report.ErrorKind;
import io.fleetmq.bench.run.Errors;
import io.fleetmq.bench.run.Phases;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What the connectors of one run saw, written concurrently from every event loop. A handshake belongs
 * to the measurement when its CONNACK arrives in the measured window: the broker's answers per second
 * are what the scenario measures. The totals count warm-up too and only drive the progress line.
 */
public final class ConnectStats {

    /** CONNACK reason codes fit in one byte: 0 accepts, anything else refuses [MQTT-3.2.2-6] / 3.1.1 table 3.1. */
    private static final int CODES = 256;

    private volatile Phases phases;

    private final LongAdder acceptedTotal = new LongAdder();
    private final LongAdder refusedTotal = new LongAdder();
    private final LongAdder acceptedMeasured = new LongAdder();
    private final AtomicLongArray refusedMeasured = new AtomicLongArray(CODES);
    private final Recorder acceptedLatency = new Recorder(3);
    private final Recorder refusedLatency = new Recorder(3);
    private final Errors errors = new Errors();

    /** Starts the clock; no CONNACK counts before this. */
    public void begin(Phases phases) {
        this.phases = phases;
    }

    /** A CONNACK with {@code code}, for a CONNECT written at {@code sentNanos}. */
    public void connAck(int code, long sentNanos, long receivedNanos) {
        if (code < 0 || code >= CODES) {
            throw new IllegalArgumentException("CONNACK code " + code + " is not one byte");
        }
        boolean accepted = code == 0;
        (accepted ? acceptedTotal : refusedTotal).increment();
        Phases p = phases;
        if (p == null || !p.measures(receivedNanos)) {
            return;
        }
        long latency = Math.max(0, receivedNanos - sentNanos);
        if (accepted) {
            acceptedMeasured.increment();
            acceptedLatency.recordValue(latency);
        } else {
            refusedMeasured.incrementAndGet(code);
            refusedLatency.recordValue(latency);
        }
    }

    /** A handshake that ended without a CONNACK; counted whenever it happened, like every error. */
    public void error(ErrorKind kind, String message) {
        errors.record(kind, message);
    }

    public Errors errors() {
        return errors;
    }

    public long acceptedTotal() {
        return acceptedTotal.sum();
    }

    public long refusedTotal() {
        return refusedTotal.sum();
    }

    public long acceptedMeasured() {
        return acceptedMeasured.sum();
    }

    /** Refusals in the window by CONNACK code, ascending; codes never seen are left out. */
    public Map<Integer, Long> refusedMeasured() {
        Map<Integer, Long> byCode = new TreeMap<>();
        for (int code = 1; code < CODES; code++) {
            long n = refusedMeasured.get(code);
            if (n > 0) {
                byCode.put(code, n);
            }
        }
        return byCode;
    }

    /** Everything recorded since the last call; call once, after the connectors stopped. */
    public Histogram takeAcceptedLatency() {
        return acceptedLatency.getIntervalHistogram();
    }

    public Histogram takeRefusedLatency() {
        return refusedLatency.getIntervalHistogram();
    }
}
