package io.fleetmq.bench.report;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.probe.GeneratorUsage;
import io.fleetmq.bench.probe.ResourceSample;

/**
 * The result of one idle run: how the fleet came up, what failed and why, what was lost while held,
 * and what the connections cost the broker (and the generator).
 *
 * @param probeSources     where the broker figures come from (metric names, PID); empty for none
 * @param rampSeconds      from the first connect to the end of the last handshake
 * @param holdSeconds      how long the fleet was held after the ramp
 * @param counts           handshakes and connections over the whole run
 * @param lostWhileRamping served connections that closed before the ramp was over
 * @param lostDuringHold   served connections that closed during the hold
 * @param heldAfterRamp    connections served and open when the ramp ended: the divisor of the per-connection figures
 * @param heldAtEnd        connections still served and open when the hold ended
 * @param brokerBefore     the broker's memory before the first connect
 * @param brokerAfter      and once all handshakes had ended
 * @param generatorBefore  this tool's threads and memory before the first connect (after a GC of its own)
 * @param generatorAfter   and after the ramp (after a GC of its own)
 */
public record IdleReport(
        BenchOptions options,
        String runId,
        String transport,
        String probeSources,
        double rampSeconds,
        double holdSeconds,
        FleetCounts counts,
        long lostWhileRamping,
        long lostDuringHold,
        long heldAfterRamp,
        long heldAtEnd,
        ResourceSample brokerBefore,
        ResourceSample brokerAfter,
        GeneratorUsage generatorBefore,
        GeneratorUsage generatorAfter) {

    /** CONNACKs with code 0 per second of the ramp. */
    public double connectsPerSecond() {
        return rampSeconds > 0 ? counts.accepted() / rampSeconds : 0;
    }

    public double heapPerConnection() {
        return ResourceSample.perEach(brokerBefore.heapBytes(), brokerAfter.heapBytes(), heldAfterRamp);
    }

    public double directPerConnection() {
        return ResourceSample.perEach(brokerBefore.directBytes(), brokerAfter.directBytes(), heldAfterRamp);
    }

    public double rssPerConnection() {
        return ResourceSample.perEach(brokerBefore.rssBytes(), brokerAfter.rssBytes(), heldAfterRamp);
    }

    public double generatorHeapPerConnection() {
        return ResourceSample.perEach(generatorBefore.heapBytes(), generatorAfter.heapBytes(), heldAfterRamp);
    }

    /** Every device served, none failed, none lost. */
    public boolean clean() {
        return counts.served() == options.clients() && counts.failures() == 0 && counts.lost() == 0;
    }
}
