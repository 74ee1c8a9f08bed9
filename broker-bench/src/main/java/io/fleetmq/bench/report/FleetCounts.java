package io.fleetmq.bench.report;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a fleet's handshakes and connections did over one phase of an idle or storm run.
 *
 * @param attempts        connections opened (TCP connect started)
 * @param accepted        CONNACKs with code 0
 * @param served          devices served: CONNACK 0 and a granting SUBACK, or CONNACK 0 with the session present
 * @param sessionPresent  of those, served by a resumed session without subscribing again
 * @param refusedByCode   CONNACK refusals by reason code (MQTT 5) or return code (3.1.1)
 * @param failuresByKind  every handshake that ended unserved, by kind (zero kinds included)
 * @param failuresByReason the same, by reason as shown in the table (codes named, time-outs, TCP errors)
 * @param lost            served connections closed by the broker or the network rather than by the tool
 * @param lossesByReason  the same, by reason
 * @param pings           PINGRESPs received: keep-alive that worked
 * @param messages        PUBLISH packets received on the devices' topics (acknowledged as their QoS needs)
 * @param samples         the first few failures and losses with their client IDs
 */
public record FleetCounts(
        long attempts,
        long accepted,
        long served,
        long sessionPresent,
        Map<Integer, Long> refusedByCode,
        Map<FailureKind, Long> failuresByKind,
        Map<String, Long> failuresByReason,
        long lost,
        Map<String, Long> lossesByReason,
        long pings,
        long messages,
        List<String> samples) {

    public static final FleetCounts NONE = new FleetCounts(0, 0, 0, 0, Map.of(), Map.of(), Map.of(), 0, Map.of(), 0, 0,
            List.of());

    public FleetCounts {
        refusedByCode = Map.copyOf(refusedByCode);
        EnumMap<FailureKind, Long> all = new EnumMap<>(FailureKind.class);
        for (FailureKind kind : FailureKind.values()) {
            all.put(kind, failuresByKind.getOrDefault(kind, 0L));
        }
        failuresByKind = Map.copyOf(all);
        failuresByReason = Map.copyOf(failuresByReason);
        lossesByReason = Map.copyOf(lossesByReason);
        samples = List.copyOf(samples);
    }

    public long failures() {
        return failuresByKind.values().stream().mapToLong(Long::longValue).sum();
    }

    public long failures(FailureKind kind) {
        return failuresByKind.get(kind);
    }

    public long refused() {
        return refusedByCode.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Codes ascending, for stable output. */
    public Map<Integer, Long> refusedByCodeSorted() {
        return new TreeMap<>(refusedByCode);
    }

    /** Most frequent first, then by name, for stable output. */
    public static List<Map.Entry<String, Long>> byCount(Map<String, Long> counts) {
        return counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .toList();
    }
}
