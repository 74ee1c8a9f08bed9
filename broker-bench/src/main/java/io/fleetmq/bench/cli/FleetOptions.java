package io.fleetmq.bench.cli;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;

/**
 * Settings of the scenarios that hold a fleet of long-lived connections, {@code idle} and {@code storm}.
 *
 * @param ports              every port the clients spread over, client i starting on {@code ports[i mod n]}
 *                           (the nodes of a cluster); empty when {@code --port} named just one
 * @param keepAliveSeconds   Keep Alive of every CONNECT; a client sends PINGREQ once it wrote nothing for
 *                           half of it. 0 turns keep-alive off on both sides
 * @param sourceAddresses    local addresses the connections are bound to, round-robin; empty for the
 *                           kernel's choice. One source address and one broker port allow only as many
 *                           connections as there are ephemeral ports (about 28,000 on Linux)
 * @param connectRate        most new connections per second while ramping up; 0 for no limit
 * @param connectConcurrency most handshakes (TCP, CONNECT, SUBSCRIBE) in flight while ramping up; a
 *                           burst of thousands would overflow the broker's listen backlog
 * @param topicPrefix        each client subscribes to {@code <prefix>/<runId>/<i>}
 * @param subscriptions      topic filters each client subscribes to, in one SUBSCRIBE: the first is
 *                           {@code <prefix>/<runId>/<i>}, the others {@code <prefix>/<runId>/<i>/<j>}
 * @param killPid            storm: the process to SIGKILL {@code killAfter} after all clients are up; 0 for
 *                           none, the operator then stops a node
 * @param killAfter          storm: delay between READY and the kill
 * @param reconnectJitter    storm: each reconnect waits a random time below this; zero reconnects at once
 * @param stormTimeout       storm: how long after the first drop every dropped client must be served again
 */
public record FleetOptions(
        List<Integer> ports,
        int keepAliveSeconds,
        List<InetAddress> sourceAddresses,
        long connectRate,
        int connectConcurrency,
        String topicPrefix,
        int subscriptions,
        long killPid,
        Duration killAfter,
        Duration reconnectJitter,
        Duration stormTimeout) {

    public static final int DEFAULT_KEEP_ALIVE = 60;
    public static final int DEFAULT_CONNECT_CONCURRENCY = 1000;
    public static final String DEFAULT_TOPIC_PREFIX = "fleetmq-bench";
    public static final int DEFAULT_SUBSCRIPTIONS = 1;
    public static final Duration DEFAULT_KILL_AFTER = Duration.ofSeconds(5);
    public static final Duration DEFAULT_STORM_TIMEOUT = Duration.ofSeconds(60);

    public static final FleetOptions DEFAULTS = new FleetOptions(List.of(), DEFAULT_KEEP_ALIVE, List.of(), 0,
            DEFAULT_CONNECT_CONCURRENCY, DEFAULT_TOPIC_PREFIX, DEFAULT_SUBSCRIPTIONS, 0, DEFAULT_KILL_AFTER, Duration.ZERO,
            DEFAULT_STORM_TIMEOUT);

    public FleetOptions {
        ports = List.copyOf(ports);
        sourceAddresses = List.copyOf(sourceAddresses);
    }
}
