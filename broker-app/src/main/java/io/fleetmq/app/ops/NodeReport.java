package io.fleetmq.app.ops;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fleetmq.session.RecentDrops;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * What a node tells the others on the {@code ops} topic after each sample: the sample, the drops
 * it kept since its last report (at most {@link #MAX_DROPS}, the newest), and its drop counts since
 * it started. JSON, read leniently, so a newer node may add fields.
 *
 * @param run    changes when the node process restarts, so readers know its drop sequence starts again
 * @param counts messages dropped by reason since the node started, as its {@code fleetmq_messages_dropped_total}
 */
public record NodeReport(String node, String run, long atMillis, long intervalMillis, Sample sample,
        List<RecentDrops.Drop> drops, Map<String, Long> counts) {

    /** Drops per report: keeps a report far below Kafka's record size whatever the drop rate. */
    public static final int MAX_DROPS = 200;

    private static final ObjectMapper JSON = new ObjectMapper()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    public NodeReport {
        drops = drops == null ? List.of() : List.copyOf(drops);
        counts = counts == null ? Map.of() : Map.copyOf(counts);
    }

    public byte[] encode() {
        try {
            return JSON.writeValueAsBytes(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode a node report", e);
        }
    }

    /** The report, or null if {@code value} is not one (a reader skips it). */
    public static NodeReport decode(byte[] value) {
        if (value == null) {
            return null;
        }
        try {
            NodeReport r = JSON.readValue(value, NodeReport.class);
            return r.node() == null || r.sample() == null ? null : r;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
