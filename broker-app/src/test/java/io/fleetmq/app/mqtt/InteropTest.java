package io.fleetmq.app.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import io.fleetmq.app.support.Received;
import io.fleetmq.app.support.TestBroker;
import io.fleetmq.testkit.RawMqtt;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Clients of every version on one node: HiveMQ's MQTT 5 and 3.1.1 clients, Eclipse Paho v3 1.2.5
 * speaking 3.1.1 and 3.1, and a raw 3.1 (MQIsdp) client, all exchanging messages.
 */
class InteropTest {

    @TempDir
    static Path dataDir;

    private static TestBroker broker;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir, Map.of());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static MqttClient paho(String clientId, int version, BlockingQueue<String> received) throws Exception {
        MqttClient c = new MqttClient("tcp://127.0.0.1:" + broker.mqttPort(), clientId, new MemoryPersistence());
        MqttConnectOptions options = new MqttConnectOptions();
        options.setMqttVersion(version);
        options.setCleanSession(true);
        options.setAutomaticReconnect(false);
        c.setCallback(new org.eclipse.paho.client.mqttv3.MqttCallback() {
            @Override
            public void connectionLost(Throwable cause) {
            }

            @Override
            public void messageArrived(String topic, MqttMessage message) {
                received.add(topic + " " + new String(message.getPayload(), StandardCharsets.UTF_8));
            }

            @Override
            public void deliveryComplete(org.eclipse.paho.client.mqttv3.IMqttDeliveryToken token) {
            }
        });
        c.connect(options);
        return c;
    }

    @Test
    @DisplayName("3.1.2.2 3.1.1 and MQTT 5 clients exchange messages")
    void mqtt311AndMqtt5ClientsExchangeMessages() throws Exception {
        Mqtt3BlockingClient old = broker.v3("interop-v3");
        Mqtt5BlockingClient modern = broker.v5("interop-v5");
        old.connect();
        modern.connect();
        try (Mqtt3BlockingClient.Mqtt3Publishes oldIn = old.publishes(MqttGlobalPublishFilter.ALL);
             Mqtt5BlockingClient.Mqtt5Publishes modernIn = modern.publishes(MqttGlobalPublishFilter.ALL)) {
            old.subscribeWith().topicFilter("interop/to-v3").qos(MqttQos.AT_LEAST_ONCE).send();
            modern.subscribeWith().topicFilter("interop/to-v5").qos(MqttQos.AT_LEAST_ONCE).send();
            modern.publishWith().topic("interop/to-v3").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {5}).send();
            old.publishWith().topic("interop/to-v5").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[] {3}).send();
            assertArrayEquals(new byte[] {5}, oldIn.receive(20, TimeUnit.SECONDS).orElseThrow().getPayloadAsBytes());
            assertArrayEquals(new byte[] {3}, Received.next(modernIn).getPayloadAsBytes());
        }
        old.disconnect();
        modern.disconnect();
    }

    @Test
    @DisplayName("[MQTT-3.1.2-2] a raw MQTT 3.1 (MQIsdp) client connects, subscribes and receives a PUBLISH without properties")
    void mqtt31ClientsConnectAndReceive() throws Exception {
        try (RawMqtt raw = broker.raw()) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            RawMqtt.writeString(body, "MQIsdp");
            body.writeBytes(new byte[] {3, 0x02, 0, 60});
            RawMqtt.writeString(body, "v31-client");
            raw.send(RawMqtt.packet(0x10, body.toByteArray()));
            assertEquals("20020000", raw.readHex(), "accepted");
            ByteArrayOutputStream sub = new ByteArrayOutputStream();
            sub.writeBytes(new byte[] {0, 1});
            RawMqtt.writeString(sub, "v31/t");
            sub.write(0);
            raw.send(RawMqtt.packet(0x82, sub.toByteArray()));
            assertEquals("9003000100", raw.readHex(), "SUBACK granting QoS 0");
            Mqtt5BlockingClient pub = broker.connectedV5("v31-pub");
            pub.publishWith().topic("v31/t").payload(new byte[] {0x31}).send();
            assertEquals("3008" + "0005" + "7633312f74" + "31", raw.readHex(), "PUBLISH without properties");
            pub.disconnect();
        }
    }

    @Test
    @DisplayName("3.1.2.2 Eclipse Paho 1.2.5 over 3.1.1 and 3.1, HiveMQ over 5 and 3.1.1: every client receives what every other sends")
    void pahoAndHiveMqClientsOfEveryVersionExchangeMessages() throws Exception {
        BlockingQueue<String> paho311In = new LinkedBlockingQueue<>();
        BlockingQueue<String> paho31In = new LinkedBlockingQueue<>();
        MqttClient paho311 = paho("paho-311", MqttConnectOptions.MQTT_VERSION_3_1_1, paho311In);
        MqttClient paho31 = paho("paho-31", MqttConnectOptions.MQTT_VERSION_3_1, paho31In);
        Mqtt5BlockingClient v5 = broker.connectedV5("mix-v5");
        Mqtt3BlockingClient v3 = broker.v3("mix-v3");
        v3.connect();
        try (Mqtt5BlockingClient.Mqtt5Publishes v5In = v5.publishes(MqttGlobalPublishFilter.ALL);
             Mqtt3BlockingClient.Mqtt3Publishes v3In = v3.publishes(MqttGlobalPublishFilter.ALL)) {
            paho311.subscribe("mix/#", 2);
            paho31.subscribe("mix/#", 1);
            v5.subscribeWith().topicFilter("mix/#").qos(MqttQos.EXACTLY_ONCE).send();
            v3.subscribeWith().topicFilter("mix/#").qos(MqttQos.AT_LEAST_ONCE).send();

            paho311.publish("mix/paho-311", "a".getBytes(StandardCharsets.UTF_8), 2, false);
            paho31.publish("mix/paho-31", "b".getBytes(StandardCharsets.UTF_8), 1, false);
            v5.publishWith().topic("mix/v5").qos(MqttQos.AT_LEAST_ONCE).payload("c".getBytes())
                    .userProperties().add("only", "v5").applyUserProperties().messageExpiryInterval(60).send();
            v3.publishWith().topic("mix/v3").qos(MqttQos.EXACTLY_ONCE).payload("d".getBytes()).send();

            Set<String> expected = Set.of("mix/paho-311 a", "mix/paho-31 b", "mix/v5 c", "mix/v3 d");
            assertEquals(expected, drain(paho311In), "Paho 3.1.1");
            assertEquals(expected, drain(paho31In), "Paho 3.1");
            Set<String> fromV5 = new TreeSet<>();
            Set<String> fromV3 = new TreeSet<>();
            for (int i = 0; i < 4; i++) {
                var m = Received.next(v5In);
                fromV5.add(m.getTopic() + " " + new String(m.getPayloadAsBytes(), StandardCharsets.UTF_8));
                var o = v3In.receive(20, TimeUnit.SECONDS).orElseThrow();
                fromV3.add(o.getTopic() + " " + new String(o.getPayloadAsBytes(), StandardCharsets.UTF_8));
            }
            assertEquals(expected, fromV5, "HiveMQ 5");
            assertEquals(expected, fromV3, "HiveMQ 3.1.1");
        }
        paho311.disconnect();
        paho31.disconnect();
        paho311.close();
        paho31.close();
        v5.disconnect();
        v3.disconnect();
    }

    private static Set<String> drain(BlockingQueue<String> in) throws InterruptedException {
        Set<String> out = new TreeSet<>();
        for (int i = 0; i < 4; i++) {
            String m = in.poll(20, TimeUnit.SECONDS);
            assertTrue(m != null, "4 messages within 20 s each, got " + out);
            out.add(m);
        }
        return out;
    }
}
