package io.fleetmq.bench.scenario;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The traffic shapes the tool knows. Each turns a client count into a {@link Topology}: who publishes
 * where, who subscribes to what, and how many deliveries one publish must cause.
 */
public enum Scenario {
    /** N publishers, each on its own topic, one subscriber on a single-level wildcard over all of them. */
    FAN_IN("fan-in"),
    /** One publisher, N subscribers on the same topic: every publish is delivered N times. */
    FAN_OUT("fan-out"),
    /** N independent pairs: publisher i publishes to topic i, which only subscriber i subscribes to. */
    P2P("p2p"),
    /**
     * No traffic: N connectors, each opening a connection, completing the CONNECT handshake and closing
     * again in a loop, as devices that reconnect do. Measures the broker's connection setup
     * (authentication included) rather than its message path, so it has no {@link Topology}.
     */
    CONNECT("connect"),
    /**
     * No traffic either: N devices connect, each subscribes to a topic of its own, and they stay
     * connected, pinging, for the run's duration. Measures what a connection costs the broker (memory
     * per connection) and how fast it takes a fleet on.
     */
    IDLE("idle"),
    /**
     * N devices connected as in idle; when the broker (or one node of a cluster) drops them, each
     * reconnects at once under the same client ID, to another port, and subscribes again unless its
     * session survived. Measures how long until all are served again, and how the broker refuses.
     */
    STORM("storm");

    /** The names, for messages: {@code fan-in, fan-out, p2p, connect, idle or storm}. */
    public static final String NAMES = "fan-in, fan-out, p2p, connect, idle or storm";

    private final String label;

    Scenario(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public static Scenario parse(String text) {
        String wanted = text.trim().toLowerCase(Locale.ROOT);
        for (Scenario scenario : values()) {
            if (scenario.label.equals(wanted)) {
                return scenario;
            }
        }
        throw new IllegalArgumentException("unknown scenario '" + text + "': use " + NAMES);
    }

    /** Idle and storm: a fleet of held connections, no publishers and no {@link Topology}. */
    public boolean holdsFleet() {
        return this == IDLE || this == STORM;
    }

    /** Fan-in, fan-out and p2p: the scenarios that publish and measure deliveries. */
    public boolean publishes() {
        return this == FAN_IN || this == FAN_OUT || this == P2P;
    }

    /**
     * The topology for {@code clients} (publishers for fan-in, subscribers for fan-out, pairs for p2p).
     * Topics and client IDs carry the run ID so that two runs against one broker never see each
     * other's messages, and a wildcard never matches a stranger's topic.
     */
    public Topology topology(int clients, String runId) {
        requireClients(clients);
        if (!publishes()) {
            throw new IllegalStateException(label + " publishes nothing and has no topology");
        }
        String root = "fleetmq-bench/" + runId + "/" + label;
        List<Topology.Publisher> publishers = new ArrayList<>();
        List<Topology.Subscriber> subscribers = new ArrayList<>();
        switch (this) {
            case FAN_IN -> {
                for (int i = 0; i < clients; i++) {
                    publishers.add(new Topology.Publisher(i, clientId(runId, 'p', i), root + "/" + i));
                }
                subscribers.add(new Topology.Subscriber(clientId(runId, 's', 0), root + "/+"));
            }
            case FAN_OUT -> {
                publishers.add(new Topology.Publisher(0, clientId(runId, 'p', 0), root));
                for (int i = 0; i < clients; i++) {
                    subscribers.add(new Topology.Subscriber(clientId(runId, 's', i), root));
                }
            }
            case P2P -> {
                for (int i = 0; i < clients; i++) {
                    publishers.add(new Topology.Publisher(i, clientId(runId, 'p', i), root + "/" + i));
                    subscribers.add(new Topology.Subscriber(clientId(runId, 's', i), root + "/" + i));
                }
            }
            default -> throw new IllegalStateException("unhandled scenario " + this);
        }
        int deliveriesPerPublish = this == FAN_OUT ? clients : 1;
        return new Topology(publishers, subscribers, deliveriesPerPublish);
    }

    /**
     * The client IDs of the connect scenario's connectors, one each: a connector keeps its ID across
     * its reconnects, as a device does, so the broker sees N identities coming back over and over.
     */
    public static List<String> connectorIds(int clients, String runId) {
        requireClients(clients);
        List<String> ids = new ArrayList<>(clients);
        for (int i = 0; i < clients; i++) {
            ids.add(clientId(runId, 'c', i));
        }
        return ids;
    }

    /**
     * The client ID of device {@code index} of an idle or storm fleet: kept across reconnects, as a
     * device keeps its identity, so a broker with persistent sessions can resume it.
     */
    public static String deviceId(String runId, int index) {
        return clientId(runId, 'd', index);
    }

    /** The topic device {@code index} subscribes to: its own, so that no delivery fans out by accident. */
    public static String deviceTopic(String prefix, String runId, int index) {
        return prefix + "/" + runId + "/" + index;
    }

    private static void requireClients(int clients) {
        if (clients < 1) {
            throw new IllegalArgumentException("clients must be at least 1, was " + clients);
        }
    }

    /**
     * Short IDs such as {@code b3f9a1cp42}: a server must accept 1 to 23 characters of [0-9a-zA-Z] and may
     * refuse anything else [MQTT-3.1.3-5], so the ID stays inside that even for a million clients.
     */
    static String clientId(String runId, char role, int index) {
        return "b" + runId + role + index;
    }
}
