package io.fleetmq.app.support;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import io.fleetmq.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;

/**
 * QoS 1 traffic between publisher/subscriber pairs spread over the nodes of a cluster, as fault
 * tests need it: every client has a persistent session and a will with a delay, reconnects by
 * itself, and moves to the next node of its list when its connection ends; the load counts what
 * was acknowledged, what arrived, how connections ended and where clients reconnected.
 */
public final class PairLoad implements AutoCloseable {

    private final int pairs;
    private final IntUnaryOperator portOfNode;
    private final int nodes;
    private final List<Mqtt5AsyncClient> publishers = new ArrayList<>();
    private final List<Mqtt5AsyncClient> subscribers = new ArrayList<>();
    private final List<Set<Long>> acknowledged = new ArrayList<>();
    private final List<Set<Long>> received = new ArrayList<>();
    private final List<AtomicLong> nextSeq = new ArrayList<>();
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicInteger refusedPublishes = new AtomicInteger();
    private final AtomicInteger duplicates = new AtomicInteger();
    private final Map<String, AtomicInteger> disconnectReasons = new ConcurrentHashMap<>();
    private final Map<String, Set<Integer>> nodesUsed = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> wills = new ConcurrentHashMap<>();
    private final AtomicInteger disconnects = new AtomicInteger();
    /** System.nanoTime() of the last time a client was told to use another server (0: never). */
    private final AtomicLong lastToldToMove = new AtomicLong();
    private final String topicPrefix;
    private ScheduledExecutorService ticker;
    private Mqtt5AsyncClient willWatcher;

    /**
     * @param portOfNode MQTT port of node 1..{@code nodes}
     */
    public PairLoad(String name, int pairs, int nodes, IntUnaryOperator portOfNode) {
        this.pairs = pairs;
        this.nodes = nodes;
        this.portOfNode = portOfNode;
        this.topicPrefix = name;
        for (int i = 0; i < pairs; i++) {
            acknowledged.add(ConcurrentHashMap.newKeySet());
            received.add(ConcurrentHashMap.newKeySet());
            nextSeq.add(new AtomicLong());
        }
    }

    /** Connects everyone: publisher i to node i, its subscriber to the next node; waits for the subscriptions. */
    public PairLoad connect(Duration timeout) {
        willWatcher = client(topicPrefix + "-wills", 1);
        willWatcher.publishes(MqttGlobalPublishFilter.ALL, p -> wills
                .computeIfAbsent(p.getTopic().toString(), t -> new AtomicInteger()).incrementAndGet());
        connect(willWatcher, null);
        willWatcher.subscribeWith().topicFilter(topicPrefix + "/wills/#").qos(MqttQos.AT_LEAST_ONCE).send().join();
        for (int i = 0; i < pairs; i++) {
            int pair = i;
            Mqtt5AsyncClient sub = client(topicPrefix + "-sub-" + i, 1 + (i + 1) % nodes);
            sub.publishes(MqttGlobalPublishFilter.ALL, p -> {
                long seq = Long.parseLong(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8));
                if (!received.get(pair).add(seq)) {
                    duplicates.incrementAndGet();
                }
            });
            connect(sub, topicPrefix + "/wills/sub-" + i);
            sub.subscribeWith().topicFilter(topicPrefix + "/pairs/" + i).qos(MqttQos.AT_LEAST_ONCE).send().join();
            subscribers.add(sub);
            Mqtt5AsyncClient pub = client(topicPrefix + "-pub-" + i, 1 + i % nodes);
            connect(pub, topicPrefix + "/wills/pub-" + i);
            publishers.add(pub);
        }
        // A subscription reaches every node through Kafka: wait until each pair delivers.
        Await.until(timeout, "every pair to deliver", () -> {
            tick();
            for (int i = 0; i < pairs; i++) {
                if (received.get(i).isEmpty()) {
                    return false;
                }
            }
            return true;
        });
        return this;
    }

    private Mqtt5AsyncClient client(String id, int node) {
        AtomicInteger at = new AtomicInteger(node);
        return Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1").serverPort(portOfNode.applyAsInt(node))
                .automaticReconnect().initialDelay(200, TimeUnit.MILLISECONDS).maxDelay(2, TimeUnit.SECONDS)
                .applyAutomaticReconnect()
                // The node this connection went to: where the last disconnect pointed the reconnect.
                .addConnectedListener(ctx -> nodesUsed.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet())
                        .add(at.get()))
                .addDisconnectedListener(ctx -> {
                    disconnects.incrementAndGet();
                    String reason = ctx.getCause() instanceof Mqtt5DisconnectException d
                            ? d.getMqttMessage().getReasonCode().name() : ctx.getCause().getClass().getSimpleName();
                    disconnectReasons.computeIfAbsent(reason, r -> new AtomicInteger()).incrementAndGet();
                    if (reason.equals(Mqtt5DisconnectReasonCode.USE_ANOTHER_SERVER.name())) {
                        lastToldToMove.set(System.nanoTime());
                    }
                    // Told to go elsewhere, or the node is away: the next node of the list.
                    int next = 1 + at.getAndUpdate(n -> n % nodes + 1) % nodes;
                    ctx.getReconnector().transportConfig().serverHost("127.0.0.1")
                            .serverPort(portOfNode.applyAsInt(next)).applyTransportConfig();
                })
                .buildAsync();
    }

    private static void connect(Mqtt5AsyncClient client, String willTopic) {
        var connect = client.connectWith().cleanStart(false).sessionExpiryInterval(600);
        if (willTopic != null) {
            // A reconnect within the delay cancels the will [MQTT-3.1.3-9]: only a client that stays
            // away has it published.
            connect = connect.willPublish().topic(willTopic).qos(MqttQos.AT_LEAST_ONCE)
                    .payload("gone".getBytes(StandardCharsets.UTF_8)).delayInterval(60).applyWillPublish();
        }
        connect.send().join();
    }

    /** Starts publishing: every pair, every {@code period}. */
    public void start(Duration period) {
        ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pair-load");
            t.setDaemon(true);
            return t;
        });
        ticker.scheduleAtFixedRate(this::tick, 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void tick() {
        for (int i = 0; i < publishers.size(); i++) {
            int pair = i;
            long seq = nextSeq.get(i).getAndIncrement();
            pending.incrementAndGet();
            publishers.get(i).publishWith().topic(topicPrefix + "/pairs/" + i).qos(MqttQos.AT_LEAST_ONCE)
                    .payload(Long.toString(seq).getBytes(StandardCharsets.UTF_8)).send()
                    .whenComplete((result, error) -> {
                        pending.decrementAndGet();
                        if (error == null && result.getError().isEmpty()) {
                            acknowledged.get(pair).add(seq);
                        } else {
                            refusedPublishes.incrementAndGet(); // an error reason code: not acknowledged as stored
                        }
                    });
        }
    }

    /** Stops publishing and waits until every publish has its answer. */
    public void stop(Duration timeout) {
        if (ticker != null) {
            ticker.shutdownNow();
        }
        Await.until(timeout, "every publish to be answered", () -> pending.get() == 0);
    }

    /** Number of messages acknowledged so far, all pairs together. */
    public long acknowledgedCount() {
        return acknowledged.stream().mapToLong(Set::size).sum();
    }

    /** Waits until each pair has received a message published after this call. */
    public void awaitDeliveryAfterNow(Duration timeout) {
        long[] marks = new long[pairs];
        for (int i = 0; i < pairs; i++) {
            marks[i] = nextSeq.get(i).get();
        }
        Await.until(timeout, "every pair to deliver again", () -> {
            for (int i = 0; i < pairs; i++) {
                long mark = marks[i];
                if (received.get(i).stream().noneMatch(s -> s >= mark)) {
                    return false;
                }
            }
            return true;
        });
    }

    /** Acknowledged messages that have not arrived, per pair (empty lists when none). */
    public List<List<Long>> missing() {
        List<List<Long>> missing = new ArrayList<>();
        for (int i = 0; i < pairs; i++) {
            Set<Long> got = received.get(i);
            missing.add(acknowledged.get(i).stream().filter(s -> !got.contains(s)).sorted().toList());
        }
        return missing;
    }

    /** Waits until every acknowledged message has arrived; returns what is still missing after that. */
    public List<List<Long>> awaitAllAcknowledgedDelivered(Duration timeout) {
        try {
            Await.until(timeout, "every acknowledged message to arrive",
                    () -> missing().stream().allMatch(List::isEmpty));
        } catch (AssertionError e) {
            // the caller asserts on what is missing, with the numbers
        }
        return missing();
    }

    public int disconnects() {
        return disconnects.get();
    }

    /** How connections ended: DISCONNECT reason code names, or the exception's class name. */
    public Map<String, Integer> disconnectReasons() {
        Map<String, Integer> copy = new java.util.TreeMap<>();
        disconnectReasons.forEach((k, v) -> copy.put(k, v.get()));
        return copy;
    }

    /** Clients that were connected to more than one node during the run. */
    public long clientsThatMoved() {
        return nodesUsed.values().stream().filter(ports -> ports.size() > 1).count();
    }

    /** Wills that arrived, by topic. */
    public Map<String, Integer> wills() {
        Map<String, Integer> copy = new java.util.TreeMap<>();
        wills.forEach((k, v) -> copy.put(k, v.get()));
        return copy;
    }

    public int refusedPublishes() {
        return refusedPublishes.get();
    }

    public int duplicates() {
        return duplicates.get();
    }

    /** System.nanoTime() when a client was last told to use another server, 0 if never. */
    public long lastToldToMoveNanos() {
        return lastToldToMove.get();
    }

    /** {@code USE_ANOTHER_SERVER} as the DISCONNECT reason clients were told. */
    public int toldToUseAnotherServer() {
        return disconnectReasons().getOrDefault(Mqtt5DisconnectReasonCode.USE_ANOTHER_SERVER.name(), 0);
    }

    @Override
    public void close() {
        if (ticker != null) {
            ticker.shutdownNow();
        }
        List<Mqtt5AsyncClient> all = new ArrayList<>(publishers);
        all.addAll(subscribers);
        if (willWatcher != null) {
            all.add(willWatcher);
        }
        for (Mqtt5AsyncClient c : all) {
            try {
                c.disconnect().get(5, TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // already gone with its node; nothing to release
            }
        }
    }
}
