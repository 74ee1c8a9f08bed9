package io.fleetmq.app.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.BrokerNode;
import io.fleetmq.app.Launcher;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import io.fleetmq.testkit.TestServices;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A broker node in this JVM on the test kit's shared Kafka, Redis and PostgreSQL, with its own
 * topic prefix so tests do not see each other's messages, and free ports. Also makes clients for
 * it: HiveMQ's for MQTT 5 and 3.1.1, raw sockets for what a library will not send.
 */
public final class TestBroker implements AutoCloseable {

    private final BrokerNode node;

    private TestBroker(BrokerNode node) {
        this.node = node;
    }

    public static TestBroker start(Path dataDir, Map<String, String> extraEnv) {
        TestServices s = TestServices.shared();
        Map<String, String> env = new HashMap<>();
        env.put("BROKER_DATA_DIR", dataDir.toString());
        env.put("BROKER_NODE_ID", "test-node");
        env.put("BIND_ADDRESS", "127.0.0.1");
        env.put("MQTT_TCP_PORT", "0");
        env.put("MQTT_WS_PORT", "0");
        env.put("HTTP_PORT", "0");
        env.put("KAFKA_BOOTSTRAP_SERVERS", s.kafkaBootstrapServers());
        env.put("KAFKA_TOPIC_PREFIX", "t" + UUID.randomUUID().toString().substring(0, 8) + ".");
        env.put("KAFKA_PUBLISH_PARTITIONS", "4");
        env.put("REDIS_URL", s.redisUrl());
        // A schema of its own (the same again when the test restarts the node on its data directory):
        // test classes run side by side, and one's credentials or admin users must not reach another.
        env.putAll(PrivateDatabase.envFor(dataDir));
        // Tests drive one client far beyond a public broker's per-client publish rate (floods for
        // back-pressure, thousands of messages for queues); the rate limit has tests of its own.
        env.put("MQTT_MAX_PUBLISH_RATE", "0");
        env.put("MQTT_MAX_PUBLISH_BYTES_RATE", "0");
        env.putAll(extraEnv);
        return new TestBroker((BrokerNode) new Launcher(env::get, new PrintStream(new ByteArrayOutputStream()))
                .run("node"));
    }

    public BrokerNode node() {
        return node;
    }

    public int mqttPort() {
        return node.mqttPort("TCP");
    }

    /** An MQTT 5 client of this node over TCP, not yet connected. */
    public Mqtt5BlockingClient v5(String clientId) {
        return Mqtt5Client.builder().identifier(clientId).serverHost("127.0.0.1").serverPort(mqttPort())
                .buildBlocking();
    }

    /** An MQTT 5 client, connected with the defaults (clean start, no session expiry). */
    public Mqtt5BlockingClient connectedV5(String clientId) {
        Mqtt5BlockingClient c = v5(clientId);
        c.connect();
        return c;
    }

    /** An MQTT 3.1.1 client of this node over TCP, not yet connected. */
    public Mqtt3BlockingClient v3(String clientId) {
        return Mqtt3Client.builder().identifier(clientId).serverHost("127.0.0.1").serverPort(mqttPort())
                .buildBlocking();
    }

    /** A raw socket to the TCP listener. */
    public RawMqtt raw() throws IOException {
        return RawMqtt.connect(mqttPort());
    }

    /** A raw socket that has sent an MQTT 5 CONNECT (clean start, no properties) and read CONNACK 0x00. */
    public RawMqtt rawV5(String clientId) throws IOException {
        RawMqtt raw = raw();
        raw.send(RawMqtt.connectV5(clientId));
        byte[] connack = raw.readType(2);
        assertEquals(0, connack[3], "CONNACK 0x00 for " + clientId);
        return raw;
    }

    /** The Prometheus text the admin port serves at {@code /metrics}. */
    public String scrapeMetrics() {
        HttpResponse<String> r = Http.get(node.httpPort(), "/metrics");
        assertNotNull(r, "the admin port answers");
        assertEquals(200, r.statusCode());
        return r.body();
    }

    /** {@code fleetmq_messages_dropped_total} for {@code reason}, read from {@code /metrics}; 0 when not yet counted. */
    public double dropped(String reason) {
        return sample(scrapeMetrics(), "fleetmq_messages_dropped_total", "reason=\"" + reason + "\"");
    }

    /** {@code fleetmq_limit_exceeded_total} for {@code limit}, read from {@code /metrics}; 0 when not yet counted. */
    public double limitExceeded(String limit) {
        return sample(scrapeMetrics(), "fleetmq_limit_exceeded_total", "limit=\"" + limit + "\"");
    }

    /** The first sample of {@code name} whose labels contain {@code label} (any, if null); 0 when absent. */
    public double metric(String name, String label) {
        return sample(scrapeMetrics(), name, label);
    }

    /** The {@code fleetmq_sessions} gauge from {@code /metrics}. */
    public double sessions() {
        return sample(scrapeMetrics(), "fleetmq_sessions", null);
    }

    /**
     * Waits until no persistent DEVICE session of the node takes its messages before they are stored
     * ({@code fleetmq_device_queue_live_sessions} is 0). A session lets go of its lane a little after
     * its connection ended, once what it held is stored: a case that counts lanes to see its own
     * session's waits for those of the cases before it first, or one leaving as its own arrives
     * leaves the count where it was.
     */
    public void awaitNoLiveLanes() {
        Await.until(Duration.ofSeconds(20), "the sessions of earlier cases let go of their lanes",
                () -> metric("fleetmq_device_queue_live_sessions", null) == 0);
    }

    /** Whether {@code /health/ready} answers 200. */
    public boolean isReady() {
        return Http.isReady(node.httpPort());
    }

    private static double sample(String scrape, String name, String label) {
        Pattern line = Pattern.compile("^" + Pattern.quote(name) + "\\{([^}]*)\\} (\\S+)$", Pattern.MULTILINE);
        Matcher m = line.matcher(scrape);
        while (m.find()) {
            if (label == null || m.group(1).contains(label)) {
                return Double.parseDouble(m.group(2));
            }
        }
        return 0;
    }

    @Override
    public void close() {
        node.close();
    }
}
