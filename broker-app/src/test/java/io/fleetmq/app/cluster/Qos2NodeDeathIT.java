package io.fleetmq.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import io.fleetmq.app.support.TestCluster;
import io.fleetmq.testkit.Await;
import io.fleetmq.testkit.RawMqtt;
import io.fleetmq.testkit.TcpProxy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A QoS 2 publisher whose node dies after the PUBLISH was stored and before PUBREC reached it
 * resends it on another node; the message reaches the subscriber once [MQTT-4.3.3-10].
 */
class Qos2NodeDeathIT {

    private static final Duration WAIT = Duration.ofSeconds(90);
    /** Session Expiry Interval 300 s: properties length 5, id 0x11, four bytes. */
    private static final String EXPIRY_300 = "05 11 0000012C";
    private static final int PACKET_ID = 7;
    private static final int PUBREC = 5;
    private static final int PUBCOMP = 7;
    private static final int PUBACK = 4;

    @TempDir
    Path workDir;

    private TestCluster cluster;
    private TcpProxy proxy;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeables) {
            try {
                c.close();
            } catch (Exception ignored) {
                // its node is gone
            }
        }
        if (proxy != null) {
            proxy.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aQos2ResendAfterTheNodeDiedIsAcknowledgedWithoutBeingStoredTwice() throws Exception {
        cluster = TestCluster.start(workDir, 2, Map.of());

        Mqtt5BlockingClient subscriber = Mqtt5Client.builder().identifier("q2-sub").serverHost("127.0.0.1")
                .serverPort(cluster.port(2)).buildBlocking();
        closeables.add(() -> subscriber.disconnect());
        subscriber.connect();
        List<String> received = new CopyOnWriteArrayList<>();
        subscriber.toAsync().publishes(MqttGlobalPublishFilter.ALL,
                p -> received.add(new String(p.getPayloadAsBytes(), StandardCharsets.UTF_8)));
        subscriber.subscribeWith().topicFilter("q2/#").qos(MqttQos.EXACTLY_ONCE).send();

        Mqtt5BlockingClient prober = Mqtt5Client.builder().identifier("q2-prober").serverHost("127.0.0.1")
                .serverPort(cluster.port(1)).buildBlocking();
        closeables.add(() -> prober.disconnect());
        prober.connect();
        Await.until(WAIT, "the subscription to reach node 1", () -> {
            prober.publishWith().topic("q2/probe").qos(MqttQos.AT_LEAST_ONCE)
                    .payload("probe".getBytes(StandardCharsets.UTF_8)).send();
            return received.contains("probe");
        });

        // The publisher reaches node 1 through a proxy that will hold back node 1's PUBREC.
        proxy = TcpProxy.start("127.0.0.1", cluster.port(1));
        RawMqtt first = RawMqtt.connect(proxy.port());
        closeables.add(first);
        first.send(RawMqtt.connect(5, true, 60, "q2-pub", EXPIRY_300));
        assertEquals(0, RawMqtt.parseConnAckV5(first.readType(2)).reasonCode());
        proxy.pause(TcpProxy.Direction.DOWNSTREAM);
        byte[] publish = RawMqtt.publishV5("q2/data", 2, PACKET_ID, "once".getBytes(StandardCharsets.UTF_8));
        first.send(publish);
        Await.until(WAIT, "the message stored and routed to node 2", () -> received.contains("once"));
        // Node 1 sends PUBREC once Redis has the receipt; the subscriber may have the message before
        // that (delivery does not wait for the receipt), so the node dies only once PUBREC left it.
        Await.until(WAIT, "node 1's PUBREC held at the proxy", () -> proxy.held(TcpProxy.Direction.DOWNSTREAM) > 0);

        cluster.kill(1);

        // The client resumes its session on node 2 and resends with DUP, as [MQTT-4.4.0-1] asks.
        RawMqtt second = reconnect(cluster.port(2));
        byte[] dup = publish.clone();
        dup[0] |= 0x08;
        second.send(dup);
        byte[] pubrec = second.readType(PUBREC);
        assertEquals(PACKET_ID, ((pubrec[2] & 0xFF) << 8) | (pubrec[3] & 0xFF), "PUBREC for the resent packet");
        assertEquals(0, reasonCode(pubrec), "PUBREC with success");
        second.send(RawMqtt.ack(0x62, PACKET_ID));
        byte[] pubcomp = second.readType(PUBCOMP);
        assertEquals(PACKET_ID, ((pubcomp[2] & 0xFF) << 8) | (pubcomp[3] & 0xFF));
        assertEquals(0, reasonCode(pubcomp), "PUBCOMP with success: the packet identifier was known");

        // A later message of the same publisher and topic comes after any duplicate would have.
        second.send(RawMqtt.publishV5("q2/data", 1, PACKET_ID + 1, "marker".getBytes(StandardCharsets.UTF_8)));
        second.readType(PUBACK);
        Await.until(WAIT, "the marker at the subscriber", () -> received.contains("marker"));

        assertEquals(1, received.stream().filter("once"::equals).count(),
                "[MQTT-4.3.3-10] the resent QoS 2 message delivered once, but got " + received);
    }

    /** The reason code of an acknowledgement; absent means success. */
    private static int reasonCode(byte[] ack) {
        return ack[1] > 2 ? ack[4] & 0xFF : 0;
    }

    /** Connects with the session kept until the connect sequence has settled the dead node's session. */
    private RawMqtt reconnect(int port) throws IOException {
        RawMqtt[] connected = new RawMqtt[1];
        Await.until(WAIT, "the publisher to resume its session on node 2", () -> {
            try {
                RawMqtt c = RawMqtt.connect(port);
                c.send(RawMqtt.connect(5, false, 60, "q2-pub", EXPIRY_300));
                byte[] connack = c.read();
                if (connack != null && RawMqtt.parseConnAckV5(connack).reasonCode() == 0) {
                    assertEquals(true, RawMqtt.parseConnAckV5(connack).sessionPresent(), "session present");
                    connected[0] = c;
                    return true;
                }
                c.close();
                return false;
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        assertNotNull(connected[0]);
        closeables.add(connected[0]);
        return connected[0];
    }
}
