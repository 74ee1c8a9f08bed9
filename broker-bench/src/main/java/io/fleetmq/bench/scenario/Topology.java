package io.fleetmq.bench.scenario;

import java.util.List;

/**
 * Who talks to whom in one run.
 *
 * @param publishers           every publishing client, with the publisher ID stamped into its payloads
 * @param subscribers          every subscribing client and its topic filter
 * @param deliveriesPerPublish how many subscribers must receive each publish (the fan factor)
 */
public record Topology(List<Publisher> publishers, List<Subscriber> subscribers, int deliveriesPerPublish) {

    public Topology {
        publishers = List.copyOf(publishers);
        subscribers = List.copyOf(subscribers);
    }

    /** A publishing client; {@code id} indexes per-publisher state at the subscribers (0 ... publishers - 1). */
    public record Publisher(int id, String clientId, String topic) {
    }

    public record Subscriber(String clientId, String filter) {
    }
}
