package io.fleetmq.bench.report;

import io.fleetmq.bench.probe.ResourceSample;

/**
 * One line of a soak run's time series: what happened in one interval of the measured window.
 *
 * @param endSeconds end of the interval, from the start of the measured window
 * @param seconds    its length (the last interval may be shorter)
 * @param published  publishes sent in it
 * @param delivered  deliveries that arrived in it, whenever sent
 * @param latency    end-to-end latency of those deliveries
 * @param broker     the broker's memory sampled at its end; unknown parts where no source was given
 */
public record IntervalSample(double endSeconds, double seconds, long published, long delivered,
                             LatencySummary latency, ResourceSample broker) {

    public double publishedPerSecond() {
        return seconds > 0 ? published / seconds : 0;
    }

    public double deliveredPerSecond() {
        return seconds > 0 ? delivered / seconds : 0;
    }
}
