package io.fleetmq.app.ops;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the node's counters into {@link Sample}s, one per interval, and keeps the last
 * {@link #CAPACITY}. It reads the meters every node exports anyway (so a sample agrees with
 * {@code /metrics}) and costs the message path nothing.
 */
public final class Sampler {

    /** Samples kept: an hour at the default interval of 10 s. */
    public static final int CAPACITY = 360;
    static final String DROPPED = "fleetmq.messages.dropped";

    /** The node's sizes at sampling time; zero while no incarnation serves. */
    public interface Gauges {
        long connections();

        long sessions();

        long subscriptions();
    }

    private final MeterRegistry meters;
    private final Gauges gauges;
    private final ArrayDeque<Sample> samples = new ArrayDeque<>();
    private double[] last = new double[4];
    private Map<String, Long> lastDrops = Map.of();

    public Sampler(MeterRegistry meters, Gauges gauges) {
        this.meters = meters;
        this.gauges = gauges;
        // The first sample counts from here, not from the start of the process.
        this.last = traffic();
        this.lastDrops = dropCounts();
    }

    /** Takes the sample of the interval ending at {@code atMillis} and keeps it. */
    public synchronized Sample take(long atMillis) {
        double[] now = traffic();
        Map<String, Long> drops = dropCounts();
        Map<String, Long> dropDelta = new HashMap<>();
        long dropped = 0;
        for (Map.Entry<String, Long> e : drops.entrySet()) {
            long d = e.getValue() - lastDrops.getOrDefault(e.getKey(), 0L);
            if (d > 0) {
                dropDelta.put(e.getKey(), d);
                dropped += d;
            }
        }
        Sample s = new Sample(atMillis, delta(now, 0), delta(now, 1), delta(now, 2), delta(now, 3), dropped, dropDelta,
                gauges.connections(), gauges.sessions(), gauges.subscriptions());
        last = now;
        lastDrops = drops;
        if (samples.size() == CAPACITY) {
            samples.removeFirst();
        }
        samples.addLast(s);
        return s;
    }

    /** The samples kept, oldest first. */
    public synchronized List<Sample> samples() {
        return List.copyOf(samples);
    }

    /** Messages dropped by reason since the node started: {@code fleetmq_messages_dropped_total}. */
    public Map<String, Long> dropCounts() {
        Map<String, Long> counts = new HashMap<>();
        for (Counter c : meters.find(DROPPED).counters()) {
            String reason = c.getId().getTag("reason");
            if (reason != null) {
                counts.merge(reason, (long) c.count(), Long::sum);
            }
        }
        return counts;
    }

    private long delta(double[] now, int i) {
        return Math.max(0, Math.round(now[i] - last[i]));
    }

    private double[] traffic() {
        return new double[] {count("fleetmq.messages.received"), count("fleetmq.messages.sent"),
                count("fleetmq.bytes.received"), count("fleetmq.bytes.sent")};
    }

    private double count(String name) {
        return meters.find(name).counters().stream().mapToDouble(Counter::count).sum();
    }
}
