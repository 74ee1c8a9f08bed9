package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import java.util.Map;
import java.util.TreeMap;

/**
 * The result of one connect run: the broker's answers to CONNECTs whose CONNACK arrived in the
 * measured window. Refusals are a measurement (a run may test a wrong password on purpose); only
 * handshakes without any CONNACK are errors.
 *
 * @param refusedByCode   refusals by CONNACK code (MQTT 5 reason code or 3.1.1 return code)
 * @param acceptedLatency CONNECT written to CONNACK read, accepted handshakes
 * @param refusedLatency  the same for refused ones
 */
public record ConnectReport(
        BenchOptions options,
        String runId,
        String transport,
        double measuredSeconds,
        long accepted,
        Map<Integer, Long> refusedByCode,
        LatencySummary acceptedLatency,
        LatencySummary refusedLatency,
        ErrorSummary errors) {

    public ConnectReport {
        refusedByCode = Map.copyOf(refusedByCode);
    }

    /** Codes ascending, for stable output. */
    public Map<Integer, Long> refusedByCodeSorted() {
        return new TreeMap<>(refusedByCode);
    }

    public long refused() {
        return refusedByCode.values().stream().mapToLong(Long::longValue).sum();
    }

    public double acceptedPerSecond() {
        return measuredSeconds > 0 ? accepted / measuredSeconds : 0;
    }

    public double refusedPerSecond() {
        return measuredSeconds > 0 ? refused() / measuredSeconds : 0;
    }

    public boolean clean() {
        return errors.total() == 0;
    }
}
