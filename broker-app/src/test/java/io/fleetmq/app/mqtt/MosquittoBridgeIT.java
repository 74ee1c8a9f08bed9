package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fleetmq.app.support.AdminHttp;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.FreePorts;
import io.fleetmq.testkit.TcpProxy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Eclipse Mosquitto 2.0 bridging into a node, as people run both side by side while their
 * devices move over (docs/migrating-from-mosquitto.md): MQTT 5 bridge, {@code try_private false},
 * one topic tree out, one in and one both ways, {@code cleansession false} with a fixed client ID
 * that {@code MQTT_BRIDGE_CLIENT_ID_PATTERN} gives a persistent session. Mosquitto reaches the node
 * through a proxy so the test decides when the bridge may reconnect. Fails, not skips, without
 * Mosquitto: CI installs it (.ci/install-test-packages).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MosquittoBridgeIT {

    private static final Path MOSQUITTO = Path.of("/usr/sbin/mosquitto");
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String BRIDGE_ID = "bridge-site1";
    private static final String ADMIN_PASSWORD = "bridge-Password-1";

    @TempDir
    static Path dir;

    private static Map<String, String> env;
    private static io.fleetmq.app.support.PrivateDatabase db;
    private static TestBroker broker;
    private static TcpProxy proxy;
    private static Process mosquitto;
    private static int mosquittoPort;
    /** Connected to Mosquitto throughout, subscribed to what comes in from the node. */
    private static Mqtt5BlockingClient onMosquitto;
    private static final ConcurrentLinkedQueue<Mqtt5Publish> gotOnMosquitto = new ConcurrentLinkedQueue<>();
    /** A persistent session on the node, subscribed to what goes out from Mosquitto. */
    private static Mqtt5BlockingClient onNode;
    private static final ConcurrentLinkedQueue<Mqtt5Publish> gotOnNode = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void start() throws Exception {
        assertTrue(Files.isExecutable(MOSQUITTO), MOSQUITTO + " is missing: .ci/install-test-packages installs it");
        // A database of its own: the shared one may already have an admin user with another password.
        db = io.fleetmq.app.support.PrivateDatabase.create();
        env = new HashMap<>(db.env());
        // Fixed for the restart: the new node takes the old one's port, data and Kafka topics.
        env.put("MQTT_TCP_PORT", String.valueOf(FreePorts.next()));
        env.put("KAFKA_TOPIC_PREFIX", "t" + UUID.randomUUID().toString().substring(0, 8) + ".");
        env.put("MQTT_BRIDGE_CLIENT_ID_PATTERN", "bridge-.*");
        env.put("MQTT_BRIDGE_SESSION_EXPIRY", "1h");
        env.put("ADMIN_PASSWORD", ADMIN_PASSWORD);
        broker = TestBroker.start(dir.resolve("node"), env);
        proxy = TcpProxy.start("127.0.0.1", broker.mqttPort());
        mosquitto = startMosquitto();

        onNode = Mqtt5Client.builder().identifier("node-sub").serverHost("127.0.0.1")
                .serverPort(broker.mqttPort()).buildBlocking();
        onNode.toAsync().publishes(MqttGlobalPublishFilter.ALL, gotOnNode::add);
        connectOnNode();
        onNode.subscribeWith().topicFilter("a/#").qos(MqttQos.AT_LEAST_ONCE).send();
        onNode.subscribeWith().topicFilter("c/#").qos(MqttQos.AT_LEAST_ONCE).send();

        onMosquitto = Mqtt5Client.builder().identifier("local-sub").serverHost("127.0.0.1")
                .serverPort(mosquittoPort).buildBlocking();
        onMosquitto.toAsync().publishes(MqttGlobalPublishFilter.ALL, gotOnMosquitto::add);
        onMosquitto.connect();
        onMosquitto.subscribeWith().topicFilter("b/#").qos(MqttQos.AT_LEAST_ONCE).send();
        onMosquitto.subscribeWith().topicFilter("c/#").qos(MqttQos.AT_LEAST_ONCE).send();

        // The bridge is up once a message on an "in" topic comes through it.
        Mqtt5BlockingClient pub = broker.connectedV5("probe");
        Await.until(WAIT, "the bridge subscribed on the node", () -> {
            pub.publishWith().topic("b/probe").qos(MqttQos.AT_LEAST_ONCE).send();
            return topics(gotOnMosquitto).contains("b/probe");
        });
        pub.disconnect();
    }

    private static void connectOnNode() {
        onNode.connectWith().cleanStart(false).sessionExpiryInterval(3600).send();
    }

    private static Process startMosquitto() throws IOException, InterruptedException {
        mosquittoPort = FreePorts.next();
        Path config = dir.resolve("mosquitto.conf");
        Files.writeString(config, String.join("\n",
                "listener " + mosquittoPort + " 127.0.0.1",
                "allow_anonymous true",
                "persistence false",
                // Started as root, Mosquitto would drop to its own user, which may not read the temp dir.
                "user root",
                "",
                "connection fleetmq",
                "address 127.0.0.1:" + proxy.port(),
                "bridge_protocol_version mqttv50",
                "try_private false",
                "cleansession false",
                "remote_clientid " + BRIDGE_ID,
                "notifications false",
                "restart_timeout 1",
                "topic a/# out 1",
                "topic b/# in 1",
                "topic c/# both 1",
                ""), StandardCharsets.UTF_8);
        Process p = new ProcessBuilder(MOSQUITTO.toString(), "-c", config.toString(), "-v")
                .redirectErrorStream(true).redirectOutput(dir.resolve("mosquitto.log").toFile()).start();
        Await.until(Duration.ofSeconds(20), "Mosquitto listening", () -> {
            assertTrue(p.isAlive(), () -> "Mosquitto ended: " + log());
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), mosquittoPort)) {
                return true;
            } catch (IOException e) {
                return false;
            }
        });
        return p;
    }

    private static String log() {
        try {
            return Files.readString(dir.resolve("mosquitto.log"));
        } catch (IOException e) {
            return e.toString();
        }
    }

    @AfterAll
    static void stop() throws Exception {
        for (Mqtt5BlockingClient c : new Mqtt5BlockingClient[] {onNode, onMosquitto}) {
            if (c != null && c.getState().isConnected()) {
                c.disconnect();
            }
        }
        if (mosquitto != null) {
            mosquitto.destroy();
            if (!mosquitto.waitFor(10, TimeUnit.SECONDS)) {
                mosquitto.destroyForcibly();
            }
        }
        if (proxy != null) {
            proxy.close();
        }
        if (broker != null) {
            broker.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static Mqtt5BlockingClient mosquittoClient(String id) {
        Mqtt5BlockingClient c = Mqtt5Client.builder().identifier(id).serverHost("127.0.0.1")
                .serverPort(mosquittoPort).buildBlocking();
        c.connect();
        return c;
    }

    private static List<String> topics(ConcurrentLinkedQueue<Mqtt5Publish> got) {
        List<String> topics = new ArrayList<>();
        for (Mqtt5Publish p : got) {
            topics.add(p.getTopic().toString());
        }
        return topics;
    }

    private static List<String> topicsUnder(ConcurrentLinkedQueue<Mqtt5Publish> got, String prefix) {
        return topics(got).stream().filter(t -> t.startsWith(prefix)).toList();
    }

    private static List<String> numbered(String prefix, int from, int to) {
        List<String> list = new ArrayList<>();
        for (int i = from; i < to; i++) {
            list.add(prefix + i);
        }
        return list;
    }

    private static JsonNode admin(String path) throws IOException {
        int port = broker.node().httpPort();
        HttpResponse<String> login = AdminHttp.send(port, null, "POST", "/api/v1/auth/login",
                "{\"username\":\"admin\",\"password\":\"" + ADMIN_PASSWORD + "\"}");
        assertEquals(200, login.statusCode(), login.body());
        ObjectMapper json = new ObjectMapper();
        String token = json.readTree(login.body()).get("token").asText();
        HttpResponse<String> r = AdminHttp.send(port, token, "GET", path, null);
        assertEquals(200, r.statusCode(), r.body());
        return json.readTree(r.body());
    }

    /**
     * What Mosquitto's MQTT 5 bridge asks for, as the node holds it: Session Expiry 0 with Clean
     * Start 0 (the defect the bridge pattern answers), and subscriptions with No Local and Retain As
     * Published, which is what keeps a topic bridged both ways from looping.
     */
    @Test
    @Order(0)
    void theBridgeGetsAPersistentSessionAndSubscribesWithNoLocalAndRetainAsPublished() throws IOException {
        JsonNode session = admin("/api/v1/sessions/" + BRIDGE_ID);
        assertEquals(3600, session.get("sessionExpirySeconds").asLong(), session.toString());
        JsonNode subscriptions = admin("/api/v1/subscriptions?clientId=" + BRIDGE_ID).get("items");
        List<String> filters = new ArrayList<>();
        for (JsonNode s : subscriptions) {
            filters.add(s.get("topicFilter").asText());
            assertEquals(1, s.get("qos").asInt(), s.toString());
            assertTrue(s.get("options").get("noLocal").asBoolean(), s.toString());
            assertTrue(s.get("options").get("retainAsPublished").asBoolean(), s.toString());
        }
        assertEquals(List.of("b/#", "c/#"), filters.stream().sorted().toList(), "the in and both topics");
    }

    @Test
    @Order(1)
    void qos1MessagesCrossTheBridgeBothWays() {
        Mqtt5BlockingClient local = mosquittoClient("local-pub");
        Mqtt5BlockingClient remote = broker.connectedV5("node-pub");
        for (int i = 0; i < 20; i++) {
            local.publishWith().topic("a/both/" + i).qos(MqttQos.AT_LEAST_ONCE).send();
            remote.publishWith().topic("b/both/" + i).qos(MqttQos.AT_LEAST_ONCE).send();
        }
        Await.until(WAIT, "20 messages each way", () -> topicsUnder(gotOnNode, "a/both/").size() >= 20
                && topicsUnder(gotOnMosquitto, "b/both/").size() >= 20);
        assertEquals(numbered("a/both/", 0, 20), topicsUnder(gotOnNode, "a/both/"), "Mosquitto to the node, in order");
        assertEquals(numbered("b/both/", 0, 20), topicsUnder(gotOnMosquitto, "b/both/"), "the node to Mosquitto");
        assertTrue(gotOnNode.stream().filter(p -> p.getTopic().toString().startsWith("a/both/"))
                .allMatch(p -> p.getQos() == MqttQos.AT_LEAST_ONCE), "QoS 1 kept");
        local.disconnect();
        remote.disconnect();
    }

    @Test
    @Order(2)
    void aMessageOnATopicBridgedBothWaysDoesNotComeBack() {
        Mqtt5BlockingClient local = mosquittoClient("local-loop");
        Mqtt5BlockingClient remote = broker.connectedV5("node-loop");
        local.publishWith().topic("c/from-mosquitto").qos(MqttQos.AT_LEAST_ONCE).send();
        remote.publishWith().topic("c/from-node").qos(MqttQos.AT_LEAST_ONCE).send();
        Await.until(WAIT, "both crossed", () -> topics(gotOnNode).contains("c/from-mosquitto")
                && topics(gotOnMosquitto).contains("c/from-node"));
        // A fence through the same bridge connection, each way: an echo (the node sending the
        // bridge's own message back, or Mosquitto doing so) would have come before it.
        remote.publishWith().topic("b/fence").qos(MqttQos.AT_LEAST_ONCE).send();
        local.publishWith().topic("a/fence").qos(MqttQos.AT_LEAST_ONCE).send();
        Await.until(WAIT, "the fences", () -> topics(gotOnMosquitto).contains("b/fence")
                && topics(gotOnNode).contains("a/fence"));
        remote.publishWith().topic("b/fence2").qos(MqttQos.AT_LEAST_ONCE).send();
        local.publishWith().topic("a/fence2").qos(MqttQos.AT_LEAST_ONCE).send();
        Await.until(WAIT, "the second fences", () -> topics(gotOnMosquitto).contains("b/fence2")
                && topics(gotOnNode).contains("a/fence2"));
        // Each once; the two come from different brokers, so in either order.
        assertEquals(List.of("c/from-mosquitto", "c/from-node"),
                topicsUnder(gotOnMosquitto, "c/").stream().sorted().toList(),
                "Mosquitto's subscriber: each once (No Local on the bridge's subscription)");
        assertEquals(List.of("c/from-mosquitto", "c/from-node"), topicsUnder(gotOnNode, "c/").stream().sorted().toList(),
                "the node's subscriber: each once");
        local.disconnect();
        remote.disconnect();
    }

    @Test
    @Order(3)
    void retainedMessagesAreCarriedBothWays() {
        Mqtt5BlockingClient local = mosquittoClient("local-retain");
        Mqtt5BlockingClient remote = broker.connectedV5("node-retain");
        local.publishWith().topic("a/retained").payload("from mosquitto".getBytes(StandardCharsets.UTF_8))
                .qos(MqttQos.AT_LEAST_ONCE).retain(true).send();
        remote.publishWith().topic("b/retained").payload("from the node".getBytes(StandardCharsets.UTF_8))
                .qos(MqttQos.AT_LEAST_ONCE).retain(true).send();
        Await.until(WAIT, "both crossed", () -> topics(gotOnNode).contains("a/retained")
                && topics(gotOnMosquitto).contains("b/retained"));
        local.disconnect();
        remote.disconnect();

        assertEquals("from mosquitto", retainedOn(broker.v5("late-node"), "a/retained"),
                "kept as retained by the node");
        assertEquals("from the node", retainedOn(Mqtt5Client.builder().identifier("late-local")
                .serverHost("127.0.0.1").serverPort(mosquittoPort).buildBlocking(), "b/retained"),
                "kept as retained by Mosquitto: Retain As Published on the bridge's subscription");
    }

    private static String retainedOn(Mqtt5BlockingClient late, String topic) {
        ConcurrentLinkedQueue<Mqtt5Publish> got = new ConcurrentLinkedQueue<>();
        late.toAsync().publishes(MqttGlobalPublishFilter.ALL, got::add);
        late.connect();
        late.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
        Await.until(WAIT, "the retained message of " + topic, () -> !got.isEmpty());
        late.disconnect();
        Mqtt5Publish p = got.peek();
        assertTrue(p.isRetain(), "sent as retained");
        return StandardCharsets.UTF_8.decode(p.getPayload().orElseThrow()).toString();
    }

    /**
     * The node restarts while both sides keep publishing, and the bridge comes back only after the
     * node's side has published more: what the node had for the bridge waits in its session, and
     * what Mosquitto queued for the node comes in after the bridge reconnects.
     */
    @Test
    @Order(4)
    void qos1MessagesOutliveARestartOfTheNodeTheBridgeIsConnectedTo() throws Exception {
        Mqtt5BlockingClient local = mosquittoClient("local-restart");
        Mqtt5BlockingClient remote = broker.connectedV5("node-restart");
        for (int i = 0; i < 10; i++) {
            local.publishWith().topic("a/restart/" + i).qos(MqttQos.AT_LEAST_ONCE).send();
            remote.publishWith().topic("b/restart/" + i).qos(MqttQos.AT_LEAST_ONCE).send();
        }
        remote.disconnect();

        broker.close();
        // The bridge stays away until the new node has queued messages for it.
        proxy.cut();
        for (int i = 10; i < 20; i++) {
            local.publishWith().topic("a/restart/" + i).qos(MqttQos.AT_LEAST_ONCE).send();
        }
        broker = TestBroker.start(dir.resolve("node"), env);
        for (int i = 20; i < 30; i++) {
            local.publishWith().topic("a/restart/" + i).qos(MqttQos.AT_LEAST_ONCE).send();
        }
        remote = broker.connectedV5("node-restart");
        for (int i = 10; i < 30; i++) {
            remote.publishWith().topic("b/restart/" + i).qos(MqttQos.AT_LEAST_ONCE).send();
        }
        remote.disconnect();
        proxy.restore();
        connectOnNode();

        Await.until(WAIT, "30 messages each way", () -> topicsUnder(gotOnNode, "a/restart/").stream().distinct()
                .count() >= 30 && topicsUnder(gotOnMosquitto, "b/restart/").stream().distinct().count() >= 30);
        assertEquals(numbered("a/restart/", 0, 30), topicsUnder(gotOnNode, "a/restart/").stream().distinct().toList(),
                "every message Mosquitto took, through the restart");
        assertEquals(numbered("b/restart/", 0, 30),
                topicsUnder(gotOnMosquitto, "b/restart/").stream().distinct().toList(),
                "every message the node took, including those queued for the bridge while it was away");
        local.disconnect();
    }
}
