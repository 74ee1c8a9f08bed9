package io.fleetmq.app.ops;

import io.fleetmq.session.RecentDrops;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;

/**
 * What this node knows of another node from its reports: its last {@link Sampler#CAPACITY}
 * samples, its last {@link RecentDrops#DEFAULT_CAPACITY} drops and its latest drop counts, bounded
 * like the node's own.
 */
final class NodeHistory {

    private final String node;
    private final ArrayDeque<Sample> samples = new ArrayDeque<>();
    private final ArrayDeque<RecentDrops.Drop> drops = new ArrayDeque<>();
    private Map<String, Long> counts = Map.of();
    private String run;
    private long lastSequence = -1;
    private long lastHeardMillis;

    NodeHistory(String node) {
        this.node = node;
    }

    synchronized void apply(NodeReport r) {
        lastHeardMillis = Math.max(lastHeardMillis, r.atMillis());
        if (!r.run().equals(run)) {
            run = r.run(); // restarted: its drop sequence begins again
            lastSequence = -1;
        }
        Sample s = r.sample();
        if (samples.isEmpty() || s.atMillis() > samples.peekLast().atMillis()) {
            if (samples.size() == Sampler.CAPACITY) {
                samples.removeFirst();
            }
            samples.addLast(s);
        }
        for (RecentDrops.Drop d : r.drops()) {
            if (d.sequence() > lastSequence) {
                if (drops.size() == RecentDrops.DEFAULT_CAPACITY) {
                    drops.removeFirst();
                }
                drops.addLast(d);
                lastSequence = d.sequence();
            }
        }
        counts = r.counts();
    }

    String node() {
        return node;
    }

    synchronized long lastHeardMillis() {
        return lastHeardMillis;
    }

    synchronized List<Sample> samples() {
        return List.copyOf(samples);
    }

    synchronized List<RecentDrops.Drop> drops() {
        return List.copyOf(drops);
    }

    synchronized Map<String, Long> counts() {
        return counts;
    }
}
