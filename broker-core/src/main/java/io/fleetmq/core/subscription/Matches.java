package io.fleetmq.core.subscription;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The subscriptions a published topic matched. Non-shared subscriptions each get a copy of the
 * message; each shared group gets one copy, delivered to one member the caller picks.
 *
 * @param direct every matching non-shared subscription; a client whose subscriptions overlap
 *     appears once per matching subscription (MQTT 5.0 section 3.3.4 leaves the merge to the
 *     server: see {@link #byClient})
 * @param shared the members of every matching shared subscription, by group and filter
 */
public record Matches(List<Subscription> direct, Map<SharedGroupKey, List<Subscription>> shared) {

    private static final Matches NONE = new Matches(List.of(), Map.of());

    public Matches {
        direct = List.copyOf(direct);
        shared = shared.entrySet().stream()
                .collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, e -> List.copyOf(e.getValue())));
    }

    public static Matches none() {
        return NONE;
    }

    public boolean isEmpty() {
        return direct.isEmpty() && shared.isEmpty();
    }

    /**
     * Groups subscriptions by client, in order of each client's first appearance. Delivery to a
     * client with overlapping subscriptions must respect the highest QoS among them
     * [MQTT-3.3.4-2], and a single copy must carry all their Subscription Identifiers
     * [MQTT-3.3.4-4]; this grouping is where that merge starts.
     */
    public static Map<String, List<Subscription>> byClient(List<Subscription> subscriptions) {
        Map<String, List<Subscription>> byClient = new LinkedHashMap<>();
        for (Subscription s : subscriptions) {
            byClient.computeIfAbsent(s.clientId(), id -> new ArrayList<>(1)).add(s);
        }
        return byClient;
    }
}
