package io.fleetmq.app.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code fleetmq_node_sessions{type,state}}: the node's sessions by type (DEVICE, APPLICATION) and
 * state (connected, disconnected). Counting walks every session, so the four gauges share one count
 * that is taken at most once a second, however often and however many series are scraped. The
 * gauges hold it strongly: nothing else does.
 */
public final class SessionCounts {

    private static final long MAX_AGE_NANOS = 1_000_000_000L;
    private static final String[][] SERIES = {
            {"DEVICE", "connected"}, {"DEVICE", "disconnected"},
            {"APPLICATION", "connected"}, {"APPLICATION", "disconnected"}};

    private final Supplier<long[]> count;
    private long[] last;
    private long lastAt;

    private SessionCounts(Supplier<long[]> count) {
        this.count = count;
    }

    /**
     * @param count the counts in the order of {@link io.fleetmq.session.SessionRegistry#countByTypeAndState}
     * @return the gauges, for the caller to remove with its incarnation
     */
    public static List<Gauge> register(MeterRegistry meters, Supplier<long[]> count) {
        SessionCounts counts = new SessionCounts(count);
        java.util.ArrayList<Gauge> gauges = new java.util.ArrayList<>();
        for (int i = 0; i < SERIES.length; i++) {
            int index = i;
            gauges.add(Gauge.builder("fleetmq.node.sessions", counts, c -> c.get(index))
                    .description("Sessions on this node by type and state")
                    .tag("type", SERIES[i][0]).tag("state", SERIES[i][1])
                    .strongReference(true) // only the gauges hold the shared count
                    .register(meters));
        }
        return gauges;
    }

    private synchronized double get(int index) {
        long now = System.nanoTime();
        if (last == null || now - lastAt > MAX_AGE_NANOS) {
            last = count.get();
            lastAt = now;
        }
        return last[index];
    }
}
