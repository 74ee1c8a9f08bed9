package io.fleetmq.bench.cli;

import io.fleetmq.bench.client.Credentials;
import io.fleetmq.bench.client.Protocol;
import io.fleetmq.bench.client.TlsFiles;
import io.fleetmq.bench.scenario.Scenario;
import java.time.Duration;
import java.util.List;

/**
 * One run's settings, validated by {@link OptionsParser}.
 *
 * @param rate           total messages per second over all publishers; 0 means as fast as flow control
 *                       allows (TCP back-pressure, and for QoS 1 and 2 the in-flight window)
 * @param inflight       most unacknowledged QoS 1/2 publishes per publisher; the broker's Receive
 *                       Maximum lowers it further under MQTT 5
 * @param drain          longest wait after the last publish for deliveries and acknowledgements
 * @param threads        Netty event-loop threads shared by all clients
 * @param subscriberPort the port subscribers connect to; another node of a cluster than the
 *                       publishers' {@code port}, or the same
 * @param sessionExpiry  Session Expiry Interval of the subscribers (MQTT 5) in seconds: above 0 they
 *                       have persistent sessions, as devices and applications that must not miss
 *                       messages do
 * @param subscriberThreads event-loop threads of their own for the subscribers; 0 to share the
 *                       publishers' {@code threads}. In fan-in, 100 publishers at full speed on the
 *                       same threads as the one subscriber leave it little time to read, and the
 *                       run then measures the load generator instead of the broker
 * @param credentials    user name and password in every client's CONNECT; {@link Credentials#NONE} for
 *                       anonymous clients
 * @param tls            TLS and its files (connect scenario only); null for plain TCP
 * @param fleet          the idle and storm scenarios' settings: ports, keep-alive, source addresses, ramp, kill
 * @param probes         the broker's memory and the soak time series
 */
public record BenchOptions(
        Scenario scenario,
        String host,
        int port,
        Protocol protocol,
        int qos,
        int clients,
        long rate,
        Duration warmup,
        Duration duration,
        Duration drain,
        int payloadBytes,
        int inflight,
        int threads,
        int subscriberPort,
        long sessionExpiry,
        int subscriberThreads,
        Credentials credentials,
        TlsFiles tls,
        FleetOptions fleet,
        ProbeOptions probes) {

    /** No fleet settings or probes: what every scenario but idle and storm needs. */
    public BenchOptions(Scenario scenario, String host, int port, Protocol protocol, int qos, int clients, long rate,
            Duration warmup, Duration duration, Duration drain, int payloadBytes, int inflight, int threads,
            int subscriberPort, long sessionExpiry, int subscriberThreads, Credentials credentials, TlsFiles tls) {
        this(scenario, host, port, protocol, qos, clients, rate, warmup, duration, drain, payloadBytes, inflight,
                threads, subscriberPort, sessionExpiry, subscriberThreads, credentials, tls, FleetOptions.DEFAULTS,
                ProbeOptions.NONE);
    }

    /** Plain TCP. */
    public BenchOptions(Scenario scenario, String host, int port, Protocol protocol, int qos, int clients, long rate,
            Duration warmup, Duration duration, Duration drain, int payloadBytes, int inflight, int threads,
            int subscriberPort, long sessionExpiry, int subscriberThreads, Credentials credentials) {
        this(scenario, host, port, protocol, qos, clients, rate, warmup, duration, drain, payloadBytes, inflight,
                threads, subscriberPort, sessionExpiry, subscriberThreads, credentials, null);
    }

    /** Anonymous clients. */
    public BenchOptions(Scenario scenario, String host, int port, Protocol protocol, int qos, int clients, long rate,
            Duration warmup, Duration duration, Duration drain, int payloadBytes, int inflight, int threads,
            int subscriberPort, long sessionExpiry, int subscriberThreads) {
        this(scenario, host, port, protocol, qos, clients, rate, warmup, duration, drain, payloadBytes, inflight,
                threads, subscriberPort, sessionExpiry, subscriberThreads, Credentials.NONE);
    }

    /** Subscribers on the publishers' threads. */
    public BenchOptions(Scenario scenario, String host, int port, Protocol protocol, int qos, int clients, long rate,
            Duration warmup, Duration duration, Duration drain, int payloadBytes, int inflight, int threads,
            int subscriberPort, long sessionExpiry) {
        this(scenario, host, port, protocol, qos, clients, rate, warmup, duration, drain, payloadBytes, inflight,
                threads, subscriberPort, sessionExpiry, 0);
    }

    /** Subscribers and publishers on the same port. */
    public BenchOptions(Scenario scenario, String host, int port, Protocol protocol, int qos, int clients, long rate,
            Duration warmup, Duration duration, Duration drain, int payloadBytes, int inflight, int threads) {
        this(scenario, host, port, protocol, qos, clients, rate, warmup, duration, drain, payloadBytes, inflight,
                threads, port, 0);
    }

    /**
     * Every broker port, in order: the fleet's list, or just {@code port}. Client i of the idle and storm
     * scenarios starts on {@code ports().get(i % ports().size())}.
     */
    public List<Integer> ports() {
        return fleet.ports().isEmpty() ? List.of(port) : fleet.ports();
    }

    public BenchOptions withFleet(FleetOptions newFleet) {
        return new BenchOptions(scenario, host, port, protocol, qos, clients, rate, warmup, duration, drain,
                payloadBytes, inflight, threads, subscriberPort, sessionExpiry, subscriberThreads, credentials, tls,
                newFleet, probes);
    }

    public BenchOptions withProbes(ProbeOptions newProbes) {
        return new BenchOptions(scenario, host, port, protocol, qos, clients, rate, warmup, duration, drain,
                payloadBytes, inflight, threads, subscriberPort, sessionExpiry, subscriberThreads, credentials, tls,
                fleet, newProbes);
    }

    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_PORT = 1883;
    public static final int DEFAULT_CLIENTS = 100;
    public static final Duration DEFAULT_WARMUP = Duration.ofSeconds(5);
    public static final Duration DEFAULT_DURATION = Duration.ofSeconds(30);
    public static final Duration DEFAULT_DRAIN = Duration.ofSeconds(10);
    public static final int DEFAULT_PAYLOAD = 64;
    public static final int DEFAULT_INFLIGHT = 16;

    /** The defaults for everything but the scenario, which has none on purpose. */
    public static BenchOptions defaults(Scenario scenario) {
        return new BenchOptions(scenario, DEFAULT_HOST, DEFAULT_PORT, Protocol.MQTT_5, 0, DEFAULT_CLIENTS, 0,
                DEFAULT_WARMUP, DEFAULT_DURATION, DEFAULT_DRAIN, DEFAULT_PAYLOAD, DEFAULT_INFLIGHT,
                Runtime.getRuntime().availableProcessors());
    }
}
