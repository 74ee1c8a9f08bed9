package io.fleetmq.bench.cli;

import java.net.URI;
import java.time.Duration;

/**
 * What the tool watches beside its own traffic: the broker's memory, and for long runs a time series.
 *
 * @param metricsUrl  the broker's Prometheus text endpoint, for its JVM heap and direct memory; null for none
 * @param brokerPid   the broker's process, for its resident memory from {@code /proc}; 0 for none. Works
 *                    for any broker on this machine, Mosquitto included
 * @param reportEvery fan-in, fan-out and p2p: one line of rates, latency and broker memory per interval
 *                    of the measured window; zero for none
 */
public record ProbeOptions(URI metricsUrl, long brokerPid, Duration reportEvery) {

    public static final ProbeOptions NONE = new ProbeOptions(null, 0, Duration.ZERO);

    public boolean watchesBroker() {
        return metricsUrl != null || brokerPid > 0;
    }

    public boolean series() {
        return !reportEvery.isZero();
    }
}
